/* t_stream.c -- streams arrive with part 2 of the fake; until then no key can hold one. */
#include "fr_int.h"

const fri_command fri_stream_commands[] = {
    {0},
};

void fri_stream_free(void *stream) { (void)stream; }
