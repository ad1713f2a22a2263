/*
 * Model pieces as the API server's JSON, written as Karpenter writes them on a NodeClaim or Node: labels and
 * annotations as objects, taints as [{key, value, effect}], requirements as [{key, operator, values, minValues}],
 * resources as quantities. The one encoder of these pieces: the controller's writes (controller/kube_objects.h) and
 * simulate's report use it.
 *
 * Every function returns a new cJSON tree (the caller's, cJSON_Delete) or NULL with NS_ERR_INTERNAL recorded.
 */
#ifndef NS_MODEL_JSON_H
#define NS_MODEL_JSON_H

#include <cjson/cJSON.h>

#include "model/labels.h"
#include "model/requirements.h"
#include "model/resources.h"

cJSON *ns_model_labels_json(const ns_labels *l);
cJSON *ns_model_taints_json(const ns_taint *t, size_t n);
cJSON *ns_model_resources_json(const ns_res *r);
cJSON *ns_model_strings_json(char *const *v, size_t n);
/* minValues only when set; values only when there are some (Exists, DoesNotExist). */
cJSON *ns_model_requirements_json(const ns_selector_req *r, size_t n);

#endif
