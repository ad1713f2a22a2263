#include "ali_mns.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prov_buf.h"
#include "ali_client.h"
#include "ali_sign.h"

typedef struct parse_ctx {
    ali_mns_message *out;
    size_t *n;
    prov_buf text;
    bool in_message;
    char *code;
    size_t code_len;
    bool failed;
} parse_ctx;

static const char *local(const char *name)
{
    const char *c = strrchr(name, ' '); /* namespace separator */
    return c ? c + 1 : name;
}

static void on_start(void *data, const char *name, const char **attrs)
{
    parse_ctx *p = data;
    (void)attrs;
    prov_buf_free(&p->text);
    if (strcmp(local(name), "Message") == 0 && *p->n < ALI_MNS_MAX_BATCH) {
        p->in_message = true;
        memset(&p->out[*p->n], 0, sizeof(p->out[0]));
    }
}

static void on_end(void *data, const char *name)
{
    parse_ctx *p = data;
    const char *l = local(name), *t = prov_buf_str(&p->text);
    ali_mns_message *m = p->in_message ? &p->out[*p->n] : NULL;
    if (strcmp(l, "Code") == 0 && p->code)
        snprintf(p->code, p->code_len, "%s", t);
    else if (m && strcmp(l, "MessageId") == 0)
        snprintf(m->id, sizeof(m->id), "%s", t);
    else if (m && strcmp(l, "ReceiptHandle") == 0)
        snprintf(m->receipt, sizeof(m->receipt), "%s", t);
    else if (m && strcmp(l, "MessageBody") == 0 && !m->body && !(m->body = strdup(t)))
        p->failed = true;
    else if (m && strcmp(l, "Message") == 0) {
        p->in_message = false;
        if (m->body && m->receipt[0])
            (*p->n)++;
        else
            free(m->body);
    }
    prov_buf_free(&p->text);
}

static void on_text(void *data, const char *s, int len)
{
    prov_buf_append(&((parse_ctx *)data)->text, s, (size_t)len);
}

int ali_mns_parse(const char *xml, size_t len, ali_mns_message *out, size_t *n, char *err_code, size_t code_len)
{
    *n = 0;
    if (err_code)
        err_code[0] = '\0';
    XML_Parser x = XML_ParserCreateNS(NULL, ' ');
    if (!x)
        return NS_ERR_INTERNAL;
    parse_ctx p = {out, n, PROV_BUF_INIT, false, err_code, code_len, false};
    XML_SetUserData(x, &p);
    XML_SetElementHandler(x, on_start, on_end);
    XML_SetCharacterDataHandler(x, on_text);
    bool ok = XML_Parse(x, xml, (int)len, 1) == XML_STATUS_OK && !p.failed;
    XML_ParserFree(x);
    if (p.in_message && *n < ALI_MNS_MAX_BATCH)
        free(out[*n].body);
    prov_buf_free(&p.text);
    if (!ok) {
        ali_mns_messages_free(out, *n);
        *n = 0;
        return NS_ERR_INTERNAL;
    }
    return NS_OK;
}

void ali_mns_messages_free(ali_mns_message *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(m[i].body);
        m[i].body = NULL;
    }
}

/* One signed MNS request. resource = the path and query after the host. */
static int request(const ns_host *h, ns_host_ctx *ctx, ali_credentials *cr, const char *queue_url,
                   const char *method, const char *suffix, ns_http_response **resp)
{
    ali_creds c;
    int rc = ali_credentials_get(cr, &c);
    if (rc < 0)
        return rc;
    const char *path = strstr(queue_url, "://");
    path = path ? strchr(path + 3, '/') : NULL;
    if (!path)
        return NS_ERROR(h, ctx, NS_ERR_INVALID_CONFIG, "mns: %s is not a queue URL", queue_url);
    char resource[800], url[1100], date[30], sig[64], auth[256];
    snprintf(resource, sizeof(resource), "%s%s", path, suffix);
    snprintf(url, sizeof(url), "%s%s", queue_url, suffix);
    ali_http_date(h->now_ms(ctx) / 1000, date);
    ali_params mh = {0};
    ali_params_add(&mh, "x-mns-version", "2015-06-06");
    if (c.token[0])
        ali_params_add(&mh, "security-token", c.token);
    ali_params signed_h = {0};
    ali_params_add(&signed_h, "x-mns-version", "2015-06-06");
    const char *ctype = "text/xml;charset=utf-8";
    rc = mh.failed || signed_h.failed ? NS_ERR_INTERNAL
                                      : ali_mns_sign(method, "", ctype, date, &signed_h, resource, c.secret, sig,
                                                     sizeof(sig));
    if (rc == NS_OK) {
        snprintf(auth, sizeof(auth), "MNS %s:%s", c.access_key_id, sig);
        ns_http_header hs[] = {{"Date", date}, {"Content-Type", ctype}, {"Authorization", auth},
                               {"x-mns-version", "2015-06-06"}, {"security-token", c.token}};
        ns_http_request req = {.struct_size = sizeof(req),
                               .method = method,
                               .url = url,
                               .headers = hs,
                               .n_headers = c.token[0] ? 5 : 4,
                               .timeout_ms = 10000,
                               .max_retries = 2};
        rc = h->http_request(ctx, &req, resp);
        if (rc < 0)
            rc = NS_ERROR(h, ctx, rc, "mns %s %s: no answer", method, resource);
    } else {
        rc = NS_ERROR(h, ctx, NS_ERR_INTERNAL, "mns: signing %s failed", resource);
    }
    ali_params_free(&mh);
    ali_params_free(&signed_h);
    return rc;
}

static int answer_error(const ns_host *h, ns_host_ctx *ctx, const char *what, const ns_http_response *resp)
{
    ali_mns_message none[1];
    size_t n = 0;
    char code[96] = "";
    ali_mns_parse(resp->body, resp->body_len, none, &n, code, sizeof(code));
    ali_mns_messages_free(none, n);
    int cat = (int)ali_api_category(code[0] ? code : NULL, resp->status);
    return NS_ERROR(h, ctx, cat, "mns %s: HTTP %ld %s", what, resp->status, code);
}

int ali_mns_receive(const ns_host *h, ns_host_ctx *ctx, ali_credentials *cr, const char *queue_url,
                    ali_mns_message *out, size_t *n)
{
    *n = 0;
    ns_http_response *resp = NULL;
    int rc = request(h, ctx, cr, queue_url, "GET", "/messages?numOfMessages=16&waitseconds=1", &resp);
    if (rc < 0)
        return rc;
    char code[96] = "";
    if (resp->status == 200)
        rc = ali_mns_parse(resp->body, resp->body_len, out, n, code, sizeof(code)) == NS_OK
                 ? NS_OK
                 : NS_ERROR(h, ctx, NS_ERR_INTERNAL, "mns ReceiveMessage from %s: the answer is not valid XML",
                            queue_url);
    else if (resp->status == 404 && ali_mns_parse(resp->body, resp->body_len, out, n, code, sizeof(code)) == NS_OK &&
             strcmp(code, "MessageNotExist") == 0)
        rc = NS_OK; /* the queue is empty */
    else
        rc = answer_error(h, ctx, "ReceiveMessage", resp);
    h->http_response_free(resp);
    return rc;
}

int ali_mns_delete(const ns_host *h, ns_host_ctx *ctx, ali_credentials *cr, const char *queue_url, const char *receipt)
{
    prov_buf suffix = PROV_BUF_INIT;
    prov_buf_puts(&suffix, "/messages?ReceiptHandle=");
    prov_buf_percent_encode(&suffix, receipt, strlen(receipt), false);
    ns_http_response *resp = NULL;
    int rc = prov_buf_failed(&suffix) ? NS_ERR_INTERNAL
                                     : request(h, ctx, cr, queue_url, "DELETE", prov_buf_str(&suffix), &resp);
    prov_buf_free(&suffix);
    if (rc < 0)
        return rc;
    if (resp->status != 204 && resp->status != 200)
        rc = answer_error(h, ctx, "DeleteMessage", resp);
    h->http_response_free(resp);
    return rc;
}
