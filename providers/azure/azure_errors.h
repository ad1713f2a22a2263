/* ARM error codes -> nodesmith error categories (pure). */
#ifndef NS_AZURE_ERRORS_H
#define NS_AZURE_ERRORS_H

#include <stdbool.h>

#include <nodesmith/provider.h>

/* The category of an ARM error code, given the HTTP status and message ARM sent with it (quota refusals come as
 * OperationNotAllowed whose message speaks of quota). */
ns_err az_error_category(const char *code, long status, const char *message);
/* True for capacity and quota refusals that are about one offering (the VM size, zone and priority asked for). */
bool az_error_is_capacity(const char *code, const char *message);

#endif
