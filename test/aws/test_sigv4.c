/* SigV4 signing against the published test-suite vectors (test/aws/sigv4-vectors) and hand-checked properties. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_sigv4.h"
#include "prov_digest.h"
#include "test_files.h"

#define SUITE_TIME 1440938160 /* 2015-08-30T12:36:00Z */
#define MAX_VECTORS 64
#define MAX_HEADERS 16

static char *vector_names[MAX_VECTORS];
static int n_vectors;

static const aws_sigv4_credentials SUITE_CREDS = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", NULL};

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_vector_names(void)
{
    char *dir = test_data_path("sigv4-vectors");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d)) && n_vectors < MAX_VECTORS) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".req") == 0)
            vector_names[n_vectors++] = strndup(e->d_name, len - 4);
    }
    closedir(d);
    free(dir);
    qsort(vector_names, (size_t)n_vectors, sizeof(char *), compare_names);
}

static char *vector_file(const char *name, const char *ext)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "sigv4-vectors/%s.%s", name, ext);
    char *path = test_data_path(rel);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    free(path);
    return text;
}

/* Splits a .req file into a signing request: "METHOD URI HTTP/1.1", "Name:value" lines, blank line, body. Host,
 * X-Amz-Date and X-Amz-Security-Token go to their own fields, as the signer adds them itself. */
typedef struct parsed_req {
    char *text;
    aws_sigv4_request req;
    aws_sigv4_header headers[MAX_HEADERS];
    char *path;
    char *query;
    const char *token;
    const char *amz_date;
} parsed_req;

static void parse_req(char *text, parsed_req *p)
{
    memset(p, 0, sizeof(*p));
    p->text = text;
    char *body = strstr(text, "\n\n");
    if (body) {
        *body = '\0';
        body += 2;
        p->req.payload = body;
        p->req.payload_len = strlen(body);
    }
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    char *sp = strchr(line, ' ');
    char *proto = strrchr(line, ' ');
    ck_assert(sp && proto && proto > sp);
    *sp = '\0';
    *proto = '\0';
    p->req.method = line;
    char *uri = sp + 1;
    char *q = strchr(uri, '?');
    if (q) {
        *q = '\0';
        p->query = q + 1;
    }
    p->path = uri;
    p->req.path = p->path;
    p->req.query = p->query;
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *colon = strchr(line, ':');
        ck_assert(colon);
        *colon = '\0';
        const char *value = colon + 1;
        if (strcasecmp(line, "Host") == 0)
            p->req.host = value;
        else if (strcasecmp(line, "X-Amz-Date") == 0)
            p->amz_date = value;
        else if (strcasecmp(line, "X-Amz-Security-Token") == 0)
            p->token = value;
        else {
            ck_assert_uint_lt(p->req.n_headers, MAX_HEADERS);
            p->headers[p->req.n_headers].name = line;
            p->headers[p->req.n_headers].value = value;
            p->req.n_headers++;
        }
    }
    p->req.headers = p->headers;
}

START_TEST(test_vector)
{
    const char *name = vector_names[_i];
    parsed_req p;
    parse_req(vector_file(name, "req"), &p);
    char *creq = vector_file(name, "creq"), *sts = vector_file(name, "sts"), *authz = vector_file(name, "authz");
    aws_sigv4_credentials creds = SUITE_CREDS;
    creds.session_token = p.token;
    aws_sigv4_signature sig = {0};
    ck_assert_int_eq(aws_sigv4_sign(&p.req, &creds, "us-east-1", "service", SUITE_TIME, &sig), NS_OK);
    ck_assert_str_eq(sig.amz_date, p.amz_date);
    ck_assert_msg(strcmp(sig.canonical_request, creq) == 0, "%s: canonical request\n%s\nexpected\n%s", name,
                  sig.canonical_request, creq);
    ck_assert_msg(strcmp(sig.string_to_sign, sts) == 0, "%s: string to sign\n%s\nexpected\n%s", name,
                  sig.string_to_sign, sts);
    ck_assert_msg(strcmp(sig.authorization, authz) == 0, "%s: authorization\n%s\nexpected\n%s", name,
                  sig.authorization, authz);
    aws_sigv4_signature_clear(&sig);
    free(creq);
    free(sts);
    free(authz);
    free(p.text);
}
END_TEST

START_TEST(test_vector_count)
{
    /* The suite has 29 cases here; fewer means the directory was not found or a file went missing. */
    ck_assert_int_ge(n_vectors, 29);
}
END_TEST

static char *canonical_query(const char *q)
{
    prov_buf b = PROV_BUF_INIT;
    ck_assert_int_eq(aws_sigv4_canonical_query(&b, q), NS_OK);
    return prov_buf_take(&b);
}

START_TEST(test_query_repeated_unsorted_encoded)
{
    char *s = canonical_query("b=2&a=3&a=1&c&Filter.1.Name=tag%3Anodesmith&x=a b+c&e=%7e%2F&&");
    ck_assert_str_eq(s, "Filter.1.Name=tag%3Anodesmith&a=1&a=3&b=2&c=&e=~%2F&x=a%20b%2Bc");
    free(s);
    s = canonical_query(NULL);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

static char *canonical_path(const char *p)
{
    prov_buf b = PROV_BUF_INIT;
    ck_assert_int_eq(aws_sigv4_canonical_path(&b, p), NS_OK);
    return prov_buf_take(&b);
}

START_TEST(test_path_double_encoding)
{
    /* Non-S3 services encode the wire path once more: an escaped space becomes %2520. */
    const char *cases[][2] = {{"", "/"},         {"/a%20b", "/a%2520b"}, {"/a/b/../c/./d", "/a/c/d"},
                              {"/../..", "/"},   {"/x//y/", "/x/y/"},    {"/latest/api/token", "/latest/api/token"},
                              {"relative", "relative"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = canonical_path(cases[i][0]);
        ck_assert_msg(strcmp(s, cases[i][1]) == 0, "%s -> %s, expected %s", cases[i][0], s, cases[i][1]);
        free(s);
    }
}
END_TEST

START_TEST(test_session_token_and_payload)
{
    const char *body = "Action=DescribeInstances&Version=2016-11-15";
    aws_sigv4_header h[] = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
    aws_sigv4_request req = {"POST", "127.0.0.1:4566", "/", NULL, h, 1, body, strlen(body)};
    aws_sigv4_credentials creds = {"ASIAEXAMPLE", "secret", "token-value"};
    aws_sigv4_signature sig = {0};
    ck_assert_int_eq(aws_sigv4_sign(&req, &creds, "us-west-2", "ec2", SUITE_TIME, &sig), NS_OK);
    ck_assert_str_eq(sig.signed_headers, "content-type;host;x-amz-date;x-amz-security-token");
    char expected_hash[65];
    ck_assert_int_eq(prov_sha256_hex(body, strlen(body), expected_hash), NS_OK);
    ck_assert_str_eq(sig.payload_hash, expected_hash);
    ck_assert_ptr_nonnull(strstr(sig.canonical_request, "\nhost:127.0.0.1:4566\n"));
    ck_assert_ptr_nonnull(strstr(sig.canonical_request, "\nx-amz-security-token:token-value\n"));
    ck_assert_ptr_nonnull(strstr(sig.authorization, "Credential=ASIAEXAMPLE/20150830/us-west-2/ec2/aws4_request"));
    ck_assert_ptr_null(strstr(sig.authorization, "secret"));
    char first[65];
    strcpy(first, sig.signature);
    aws_sigv4_signature_clear(&sig);

    /* Without the token, the token header disappears and the signature changes. */
    creds.session_token = "";
    ck_assert_int_eq(aws_sigv4_sign(&req, &creds, "us-west-2", "ec2", SUITE_TIME, &sig), NS_OK);
    ck_assert_str_eq(sig.signed_headers, "content-type;host;x-amz-date");
    ck_assert_str_ne(sig.signature, first);
    aws_sigv4_signature_clear(&sig);
}
END_TEST

START_TEST(test_invalid_arguments)
{
    aws_sigv4_request req = {"GET", NULL, "/", NULL, NULL, 0, NULL, 0};
    aws_sigv4_signature sig = {0};
    ck_assert_int_eq(aws_sigv4_sign(&req, &SUITE_CREDS, "us-east-1", "ec2", SUITE_TIME, &sig),
                     NS_ERR_INVALID_ARGUMENT);
    req.host = "h";
    req.payload_len = 3;
    ck_assert_int_eq(aws_sigv4_sign(&req, &SUITE_CREDS, "us-east-1", "ec2", SUITE_TIME, &sig),
                     NS_ERR_INVALID_ARGUMENT);
    aws_sigv4_signature_clear(&sig);
    aws_sigv4_signature_clear(NULL);
}
END_TEST

int main(void)
{
    load_vector_names();
    Suite *s = suite_create("aws_sigv4");
    TCase *tc = tcase_create("vectors");
    tcase_add_test(tc, test_vector_count);
    tcase_add_loop_test(tc, test_vector, 0, n_vectors);
    suite_add_tcase(s, tc);
    TCase *props = tcase_create("properties");
    tcase_add_test(props, test_query_repeated_unsorted_encoded);
    tcase_add_test(props, test_path_double_encoding);
    tcase_add_test(props, test_session_token_and_payload);
    tcase_add_test(props, test_invalid_arguments);
    suite_add_tcase(s, props);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (int i = 0; i < n_vectors; i++)
        free(vector_names[i]);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
