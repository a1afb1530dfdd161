// sched_getaffinity needs _GNU_SOURCE, which must not leak into the module header.
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include "CSystem.h"

int authload_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return (int)sysconf(_SC_NPROCESSORS_ONLN);
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}
