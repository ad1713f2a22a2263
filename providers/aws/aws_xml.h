/*
 * A small XML tree built with libexpat, for AWS Query-protocol responses (EC2, STS).
 *
 * Pure: no host upcalls. Element names are kept without any namespace prefix; attributes are dropped (the Query
 * protocols carry nothing in them); each element's character data is concatenated and trimmed of surrounding white
 * space. Documents with a DOCTYPE are refused (AWS never sends one, and refusing it rules out entity expansion), and
 * so are trees deeper than AWS_XML_MAX_DEPTH.
 */
#ifndef NS_AWS_XML_H
#define NS_AWS_XML_H

#include <stddef.h>

#include <nodesmith/provider.h>

#define AWS_XML_MAX_DEPTH 64

typedef struct aws_xml_node {
    char *name;
    char *text; /* never NULL; "" when the element has no character data */
    struct aws_xml_node *parent;
    struct aws_xml_node *first_child;
    struct aws_xml_node *last_child;
    struct aws_xml_node *next; /* next sibling */
} aws_xml_node;

/* Parses data[0..len) into a tree. On success returns NS_OK and *root (free with aws_xml_free). On failure returns
 * NS_ERR_INTERNAL (memory) or NS_ERR_INVALID_ARGUMENT (not well-formed XML) with a reason, including the line, in
 * err; *root is then NULL. */
int aws_xml_parse(const char *data, size_t len, aws_xml_node **root, char *err, size_t errlen);

/* Frees a whole tree; accepts NULL. Pass the root. */
void aws_xml_free(aws_xml_node *root);

/* The first child of `node` named `name`, or NULL (also when node is NULL). */
const aws_xml_node *aws_xml_child(const aws_xml_node *node, const char *name);

/* The next sibling after `node` with the same name, or NULL. */
const aws_xml_node *aws_xml_next_same(const aws_xml_node *node);

/* Follows a '/'-separated path of child names ("instanceState/name") from node; NULL when a step is missing. */
const aws_xml_node *aws_xml_path(const aws_xml_node *node, const char *path);

/* The text of the element at `path` under node, or NULL when it is missing. The string belongs to the tree. */
const char *aws_xml_text(const aws_xml_node *node, const char *path);

/* The number of children of `node` named `name`. */
size_t aws_xml_count(const aws_xml_node *node, const char *name);

#endif
