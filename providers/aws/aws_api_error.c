#include "aws_api_error.h"

#include <stdio.h>
#include <string.h>

#include "aws_xml.h"

bool aws_api_error_parse_xml(const char *body, size_t len, aws_api_error *out)
{
    memset(out, 0, sizeof(*out));
    aws_xml_node *doc = NULL;
    char err[128];
    if (aws_xml_parse(body, len, &doc, err, sizeof(err)) != 0)
        return false;
    const aws_xml_node *error = NULL;
    const char *request_id = NULL;
    if (strcmp(doc->name, "Response") == 0) {
        error = aws_xml_path(doc, "Errors/Error");
        request_id = aws_xml_text(doc, "RequestID");
    } else if (strcmp(doc->name, "ErrorResponse") == 0) {
        error = aws_xml_child(doc, "Error");
        request_id = aws_xml_text(doc, "RequestId");
    } else if (strcmp(doc->name, "Error") == 0) {
        error = doc;
        request_id = aws_xml_text(doc, "RequestId");
    }
    const char *code = aws_xml_text(error, "Code");
    bool found = code && *code;
    if (found) {
        snprintf(out->code, sizeof(out->code), "%s", code);
        const char *message = aws_xml_text(error, "Message");
        snprintf(out->message, sizeof(out->message), "%s", message ? message : "");
        snprintf(out->request_id, sizeof(out->request_id), "%s", request_id ? request_id : "");
    }
    aws_xml_free(doc);
    return found;
}

void aws_api_error_from_json(aws_api_error *out, const char *type, const char *message, const char *request_id)
{
    memset(out, 0, sizeof(*out));
    const char *hash = type ? strrchr(type, '#') : NULL;
    snprintf(out->code, sizeof(out->code), "%s", hash ? hash + 1 : (type ? type : ""));
    snprintf(out->message, sizeof(out->message), "%s", message ? message : "");
    snprintf(out->request_id, sizeof(out->request_id), "%s", request_id ? request_id : "");
}
