/* t_stream_group.c -- consumer groups arrive with part 2 of the fake (placeholder). */
#include "fr_int.h"

const fri_command fri_stream_group_commands[] = {
    {0},
};
