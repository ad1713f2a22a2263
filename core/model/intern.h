/*
 * Interned strings: one shared, immutable copy per distinct text, for names a model holds many times over (resource
 * names, the manifest file every object of a file came from). Comparing two interned strings is comparing pointers.
 *
 * Memory: interned strings live until the process exits and are never freed by their users; intern only texts from
 * a bounded set (the distinct resource names and manifest paths a cluster uses). Thread-safe.
 */
#ifndef NS_INTERN_H
#define NS_INTERN_H

/* The interned copy of s (NULL stays NULL); NULL with NS_ERR_INTERNAL recorded on allocation failure. */
const char *ns_intern(const char *s);

#endif
