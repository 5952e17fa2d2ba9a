/* clientq.c -- growable arrays and the client queues built on them (the woken clients of
 * blocked.c, the clients given pushes of pubsub.c). */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

void *fri_array_grow(void *arr, size_t *cap, size_t len, size_t size, size_t first_cap)
{
    if (len < *cap) return arr;
    size_t ncap = *cap ? *cap * 2 : first_cap;
    void *n = fri_realloc(arr, ncap * size);
    if (!n) return NULL;
    *cap = ncap;
    return n;
}

void fri_cq_push(fri_client_queue *q, fr_client *c)
{
    if (q->head == q->len) q->head = q->len = 0;
    if (q->len == q->cap && q->head > 0) {
        /* the taken slots at the front make the room */
        memmove(q->c, q->c + q->head, (q->len - q->head) * sizeof(*q->c));
        q->len -= q->head;
        q->head = 0;
    }
    fr_client **n = fri_array_grow(q->c, &q->cap, q->len, sizeof(*q->c), 16);
    if (!n) abort();
    q->c = n;
    q->c[q->len++] = c;
}

fr_client *fri_cq_take(fri_client_queue *q)
{
    while (q->head < q->len) {
        fr_client *c = q->c[q->head++];
        if (c) return c;
    }
    return NULL;
}

void fri_cq_forget(fri_client_queue *q, const fr_client *c)
{
    for (size_t i = q->head; i < q->len; i++)
        if (q->c[i] == c) q->c[i] = NULL;
}

void fri_cq_free(fri_client_queue *q)
{
    fri_free(q->c);
    *q = (fri_client_queue){0};
}
