/*
 * Kubernetes resource quantities ("500m", "1.5Gi", "1e3", "2") parsed exactly into integers.
 *
 * Grammar (k8s.io/apimachinery resource.Quantity): [+-] digits [. digits] or [+-] . digits, then one optional
 * suffix: a decimal SI suffix (n u m k M G T P E), a binary SI suffix (Ki Mi Gi Ti Pi Ei) or a decimal exponent
 * (e or E followed by an optionally signed integer). "1E" is one exa; "1E3" is one thousand.
 *
 * A value is returned scaled by 10^scale and rounded up (towards +infinity), as Quantity.Value() (scale 0) and
 * Quantity.MilliValue() (scale 3) do: "0.1m" of cpu is 1 millicore, "100m" of memory is 1 byte.
 */
#ifndef NS_QUANTITY_H
#define NS_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_QTY_UNITS 0 /* bytes, counts */
#define NS_QTY_MILLI 3 /* millicores */

/* Parses `text`, stores ceil(value * 10^scale) in *out and sets *exact (may be NULL) to false when rounding
 * happened. Returns 0, or NS_ERR_INVALID_CONFIG with a message starting with `field` when not NULL (the caller's
 * field path, for example "spec.containers[0].resources.requests.cpu") that quotes the text and says what is wrong. Values that do
 * not fit in an int64 are errors, as are more than 36 significant digits. */
int ns_quantity_parse(const char *text, int scale, const char *field, int64_t *out, bool *exact);

/* Formats a value scaled by 10^scale back to a short quantity: millicores as "1500m" or "2", bytes with the largest
 * exact binary suffix ("1536Mi"), counts as plain integers. Always NUL-terminates; returns buf. */
char *ns_quantity_format(int64_t value, int scale, bool binary, char *buf, size_t len);

#endif
