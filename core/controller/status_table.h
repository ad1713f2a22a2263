/*
 * The status last written per object, for the controllers that write an object's /status only when it changed
 * (buffer_status.c, nodepool_status.c, nodeclass_status.c): a table of the caller's entries, found by key ("NAME",
 * "NAMESPACE/NAME", "KIND/NAME") and added on first sight. Each entry is the caller's struct whose first member is an
 * ns_status_entry; the rest starts zeroed.
 *
 * Memory: the table owns its entries, their keys and bodies; the caller's `clear` frees what else an entry holds.
 * Entry pointers are valid until the next find that adds or the next removal.
 */
#ifndef NS_STATUS_TABLE_H
#define NS_STATUS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ns_status_entry {
    char *key;
    char *body; /* the status last written, or NULL */
} ns_status_entry;

typedef struct ns_status_table {
    char *items;
    size_t n, size;
    void (*clear)(void *entry); /* may be NULL */
} ns_status_table;

/* entry_size: sizeof the caller's entry (at least sizeof(ns_status_entry)). */
void ns_status_table_init(ns_status_table *t, size_t entry_size, void (*clear)(void *entry));
void ns_status_table_free(ns_status_table *t);

/* The entry of key, added (zeroed, key copied) when absent; NULL with NS_ERR_INTERNAL recorded when out of memory. */
void *ns_status_table_find(ns_status_table *t, const char *key);
void *ns_status_table_at(const ns_status_table *t, size_t i);
/* Frees entry i; the last entry takes its place. */
void ns_status_table_remove(ns_status_table *t, size_t i);

/* Whether body differs from the one last written. */
bool ns_status_changed(const ns_status_entry *e, const char *body);
/* Records *body as written: the entry takes it and *body becomes NULL. */
void ns_status_keep(ns_status_entry *e, char **body);

#endif
