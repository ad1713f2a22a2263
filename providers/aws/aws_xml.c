#include "aws_xml.h"

#include <expat.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodesmith/provider.h>

#include "prov_buf.h"

typedef struct builder {
    XML_Parser parser;
    aws_xml_node *root;
    aws_xml_node *current;
    /* Character data of each open element, by depth: an element's text is appended to its own buffer and copied
     * once, when it closes, so a parent with many children costs no more than its text (linear in the answer). */
    prov_buf text[AWS_XML_MAX_DEPTH + 1];
    int depth;
    bool out_of_memory;
    const char *refusal; /* set when the builder stops the parser on purpose */
} builder;

static void stop(builder *b, const char *why)
{
    if (!b->refusal && !b->out_of_memory)
        b->refusal = why;
    XML_StopParser(b->parser, XML_FALSE);
}

static char *trimmed_copy(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    return strndup(s, n);
}

static void out_of_memory(builder *b)
{
    b->out_of_memory = true;
    stop(b, NULL);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    builder *b = ud;
    if (b->depth + 1 > AWS_XML_MAX_DEPTH) {
        stop(b, "elements nested too deeply");
        return;
    }
    const char *local = strrchr(name, ':');
    aws_xml_node *n = calloc(1, sizeof(*n));
    if (!n || !(n->name = strdup(local ? local + 1 : name))) {
        free(n);
        out_of_memory(b);
        return;
    }
    b->depth++;
    b->text[b->depth].len = 0;
    n->parent = b->current;
    if (b->current) {
        if (b->current->last_child)
            b->current->last_child->next = n;
        else
            b->current->first_child = n;
        b->current->last_child = n;
    } else {
        b->root = n;
    }
    b->current = n;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    builder *b = ud;
    prov_buf *text = &b->text[b->depth];
    char *t = trimmed_copy(text->len ? text->data : "", text->len);
    if (!t) {
        out_of_memory(b);
        return;
    }
    b->current->text = t;
    text->len = 0;
    b->depth--;
    b->current = b->current->parent;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    builder *b = ud;
    if (!b->current)
        return;
    prov_buf_append(&b->text[b->depth], s, (size_t)len);
    if (prov_buf_failed(&b->text[b->depth]))
        out_of_memory(b);
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
                               int has_internal_subset)
{
    stop(ud, "document type declarations are not accepted");
}

int aws_xml_parse(const char *data, size_t len, aws_xml_node **root, char *err, size_t errlen)
{
    *root = NULL;
    if (errlen)
        err[0] = '\0';
    builder b = {0};
    b.parser = XML_ParserCreate("UTF-8");
    if (!b.parser)
        return NS_ERR_INTERNAL;
    XML_SetUserData(b.parser, &b);
    XML_SetElementHandler(b.parser, on_start, on_end);
    XML_SetCharacterDataHandler(b.parser, on_text);
    XML_SetStartDoctypeDeclHandler(b.parser, on_doctype);
    int rc = NS_OK;
    if (XML_Parse(b.parser, data ? data : "", (int)len, XML_TRUE) != XML_STATUS_OK || !b.root) {
        if (b.out_of_memory) {
            rc = NS_ERR_INTERNAL;
            snprintf(err, errlen, "out of memory while parsing XML");
        } else {
            rc = NS_ERR_INVALID_ARGUMENT;
            enum XML_Error code = XML_GetErrorCode(b.parser);
            const char *why = b.refusal                ? b.refusal
                              : code != XML_ERROR_NONE ? XML_ErrorString(code)
                                                       : "no root element";
            snprintf(err, errlen, "line %lu: %s", (unsigned long)XML_GetCurrentLineNumber(b.parser), why);
        }
        aws_xml_free(b.root);
        b.root = NULL;
    }
    for (int i = 0; i <= AWS_XML_MAX_DEPTH; i++)
        prov_buf_free(&b.text[i]);
    XML_ParserFree(b.parser);
    *root = b.root;
    return rc;
}

void aws_xml_free(aws_xml_node *root)
{
    /* Iterative, so a deep or wide tree cannot exhaust the stack. */
    aws_xml_node *n = root;
    while (n) {
        if (n->first_child) {
            aws_xml_node *c = n->first_child;
            n->first_child = NULL;
            n = c;
            continue;
        }
        aws_xml_node *next = n == root ? NULL : (n->next ? n->next : n->parent);
        free(n->name);
        free(n->text);
        free(n);
        n = next;
    }
}

const aws_xml_node *aws_xml_child(const aws_xml_node *node, const char *name)
{
    if (!node)
        return NULL;
    for (const aws_xml_node *c = node->first_child; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

const aws_xml_node *aws_xml_next_same(const aws_xml_node *node)
{
    if (!node)
        return NULL;
    for (const aws_xml_node *c = node->next; c; c = c->next)
        if (strcmp(c->name, node->name) == 0)
            return c;
    return NULL;
}

const aws_xml_node *aws_xml_path(const aws_xml_node *node, const char *path)
{
    char step[128];
    while (node && *path) {
        const char *slash = strchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : strlen(path);
        if (n >= sizeof(step))
            return NULL;
        memcpy(step, path, n);
        step[n] = '\0';
        node = aws_xml_child(node, step);
        path += n + (slash ? 1 : 0);
    }
    return node;
}

const char *aws_xml_text(const aws_xml_node *node, const char *path)
{
    const aws_xml_node *n = aws_xml_path(node, path);
    return n ? n->text : NULL;
}

size_t aws_xml_count(const aws_xml_node *node, const char *name)
{
    size_t n = 0;
    for (const aws_xml_node *c = node ? aws_xml_child(node, name) : NULL; c; c = aws_xml_next_same(c))
        n++;
    return n;
}
