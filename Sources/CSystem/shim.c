// sched_getaffinity and accept4 need _GNU_SOURCE, which must not leak into the module header.
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include <malloc.h>
#include "CSystem.h"

int authload_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return (int)sysconf(_SC_NPROCESSORS_ONLN);
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

int authload_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

#include <errno.h>
#include <sys/syscall.h>
#include <stdatomic.h>

// epoll_pwait2 (Linux 5.11) takes a timespec, so loop timers fire to the microsecond instead of
// rounding every wait up to a whole millisecond. Older kernels say ENOSYS once; then epoll_wait.
static atomic_int pwait2_missing = 0;

int authload_epoll_wait_ns(int epfd, struct epoll_event *events, int max_events, long long timeout_ns) {
#ifdef SYS_epoll_pwait2
    if (!atomic_load_explicit(&pwait2_missing, memory_order_relaxed)) {
        struct timespec ts;
        struct timespec *timeout = NULL;
        if (timeout_ns >= 0) {
            ts.tv_sec = timeout_ns / 1000000000LL;
            ts.tv_nsec = timeout_ns % 1000000000LL;
            timeout = &ts;
        }
        long result = syscall(SYS_epoll_pwait2, epfd, events, max_events, timeout, NULL, 0);
        if (result >= 0 || errno != ENOSYS) return (int)result;
        atomic_store_explicit(&pwait2_missing, 1, memory_order_relaxed);
    }
#endif
    int timeout_ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999LL) / 1000000LL);
    return epoll_wait(epfd, events, max_events, timeout_ms);
}

int authload_return_free_heap(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

// The Swift runtime's hook on its global executor's enqueue (libswift_Concurrency; Swift calling convention).
typedef void (*authload_enqueue_original)(void *job) __attribute__((swiftcall));
extern void (*swift_task_enqueueGlobal_hook)(void *job, authload_enqueue_original original) __attribute__((swiftcall));

static __thread authload_job_sink diverted_sink;
static __thread void *diverted_context;

__attribute__((swiftcall)) static void authload_enqueue_global(void *job, authload_enqueue_original original) {
    if (diverted_sink) diverted_sink(diverted_context, job);
    else original(job);
}

void authload_divert_global_jobs(void *context, authload_job_sink sink) {
    diverted_context = context;
    diverted_sink = sink;
    if (sink) __atomic_store_n(&swift_task_enqueueGlobal_hook, authload_enqueue_global, __ATOMIC_RELEASE);
}
