/* spec.capacityReservationSelectorTerms of an EC2NodeClass v1, checked as Karpenter's CRD schema and CEL rules check
 * them: at most 30 terms; each names `id` (cr-[0-9a-z]+) alone, or selects by `tags` (at most 20, no empty key or
 * value; "*" matches any value), `ownerID` (12 digits) and `instanceMatchCriteria` (open or targeted), at least one
 * of tags, id and instanceMatchCriteria. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "aws_nodeclass_spec.h"

static bool all_of(const char *text, size_t from, int (*ok)(int))
{
    if (strlen(text) <= from)
        return false;
    for (const char *c = text + from; *c; c++)
        if (!ok((unsigned char)*c))
            return false;
    return true;
}

static int lower_or_digit(int c)
{
    return islower(c) || isdigit(c);
}

static int term_string(const ns_host *h, aws_nodeclass_spec *s, const ns_json *item, const char *key,
                       const char *path, const char **out, char *err, size_t errlen)
{
    const ns_json *v = h->json_get(item, key);
    *out = NULL;
    if (!v || h->json_type(v) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(v) != NS_JSON_STRING || !*h->json_string(v))
        return aws_spec_fail(s, err, errlen, "%s.%s must be a non-empty string", path, key);
    *out = h->json_string(v);
    return NS_OK;
}

static int term_tags(const ns_host *h, aws_nodeclass_spec *s, const ns_json *tags, const char *path,
                     aws_reservation_term *t, char *err, size_t errlen)
{
    if (!tags || h->json_type(tags) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(tags) != NS_JSON_OBJECT)
        return aws_spec_fail(s, err, errlen, "%s.tags must be a map of strings", path);
    return aws_spec_term_tags(h, s, tags, path, t->tags, &t->n_tags, err, errlen);
}

static int parse_term(const ns_host *h, aws_nodeclass_spec *s, const ns_json *item, const char *path,
                      aws_reservation_term *t, char *err, size_t errlen)
{
    static const char *const FIELDS[] = {"id", "tags", "ownerID", "instanceMatchCriteria", NULL};
    if (h->json_type(item) != NS_JSON_OBJECT)
        return aws_spec_fail(s, err, errlen, "%s must be an object", path);
    for (size_t i = 0; i < h->json_size(item); i++) {
        const char *key = h->json_key(h->json_at(item, i));
        bool known = false;
        for (size_t k = 0; key && FIELDS[k] && !known; k++)
            known = strcmp(FIELDS[k], key) == 0;
        if (!known)
            return aws_spec_fail(s, err, errlen, "%s.%s: unknown field", path, key ? key : "(null)");
    }
    int rc;
    if ((rc = term_string(h, s, item, "id", path, &t->id, err, errlen)) ||
        (rc = term_string(h, s, item, "ownerID", path, &t->owner_id, err, errlen)) ||
        (rc = term_string(h, s, item, "instanceMatchCriteria", path, &t->match_criteria, err, errlen)) ||
        (rc = term_tags(h, s, h->json_get(item, "tags"), path, t, err, errlen)))
        return rc;
    if (t->id && (strncmp(t->id, "cr-", 3) != 0 || !all_of(t->id, 3, lower_or_digit)))
        return aws_spec_fail(s, err, errlen, "%s.id: \"%s\" does not match ^cr-[0-9a-z]+$", path, t->id);
    if (t->owner_id && (strlen(t->owner_id) != 12 || !all_of(t->owner_id, 0, isdigit)))
        return aws_spec_fail(s, err, errlen, "%s.ownerID: \"%s\" is not a 12-digit account ID", path, t->owner_id);
    if (t->match_criteria && strcmp(t->match_criteria, "open") != 0 && strcmp(t->match_criteria, "targeted") != 0)
        return aws_spec_fail(s, err, errlen, "%s.instanceMatchCriteria: \"%s\" is not one of open, targeted", path,
                             t->match_criteria);
    if (!t->id && t->n_tags == 0 && !t->match_criteria)
        return aws_spec_fail(s, err, errlen, "%s: expected at least one, got none, ['tags', 'id', "
                             "'instanceMatchCriteria']", path);
    if (t->id && (t->n_tags || t->owner_id || t->match_criteria))
        return aws_spec_fail(s, err, errlen, "%s: 'id' is mutually exclusive, cannot be set along with other fields "
                             "in a capacity reservation selector term", path);
    return NS_OK;
}

int aws_spec_parse_reservations(const ns_host *h, const ns_json *terms, aws_nodeclass_spec *s, char *err,
                                size_t errlen)
{
    s->n_reservations = 0;
    if (!terms || h->json_type(terms) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(terms) != NS_JSON_ARRAY)
        return aws_spec_fail(s, err, errlen, "spec.capacityReservationSelectorTerms must be a list");
    if (h->json_size(terms) > AWS_SPEC_MAX_TERMS)
        return aws_spec_fail(s, err, errlen, "spec.capacityReservationSelectorTerms: more than %d terms",
                             AWS_SPEC_MAX_TERMS);
    for (size_t i = 0; i < h->json_size(terms); i++) {
        char path[64];
        snprintf(path, sizeof(path), "spec.capacityReservationSelectorTerms[%zu]", i);
        aws_reservation_term *t = &s->reservations[s->n_reservations];
        memset(t, 0, sizeof(*t));
        int rc = parse_term(h, s, h->json_at(terms, i), path, t, err, errlen);
        if (rc != NS_OK)
            return rc;
        s->n_reservations++;
    }
    return NS_OK;
}
