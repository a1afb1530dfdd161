// System calls Swift's Glibc module does not expose (epoll, eventfd) and small
// wrappers for variadic or macro-based APIs. Our code, header-only; not a dependency.
#ifndef AUTHLOAD_CSYSTEM_H
#define AUTHLOAD_CSYSTEM_H

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <errno.h>
#include <unistd.h>
#include <time.h>
#include <signal.h>

/// Monotonic nanoseconds (`MonotonicInstant`), the time base of the event loops' timers and request timing.
static inline long long authload_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/// CPUs this process may run on (respects taskset and cgroup cpusets), at least 1.
/// Defined in shim.c, where _GNU_SOURCE can be set without clashing with the Glibc module.
int authload_available_cpus(void);

/// Hands whole free pages of the heap back to the kernel (glibc's malloc_trim(0)); 1 when some were.
/// Without it a long run's RSS keeps the high-water mark of its heap, pinned by fragmentation. Defined in shim.c.
int authload_return_free_heap(void);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: an accepted socket ready for the loop in one call. Defined in shim.c.
int authload_accept_nonblocking(int fd);

/// epoll_wait with a timeout in nanoseconds (-1 waits forever); microsecond-precise where the
/// kernel has epoll_pwait2, else rounded up to milliseconds. Defined in shim.c.
int authload_epoll_wait_ns(int epfd, struct epoll_event *events, int max_events, long long timeout_ns);

#endif

/// Where the calling thread's jobs for Swift's global executor go instead: `sink(context, job)` receives each job that
/// this thread hands to the global executor (a task resumed by a continuation with no executor to return to) until
/// the thread sets the sink to NULL. Other threads' jobs go to the global pool as ever. Defined in shim.c.
typedef void (*authload_job_sink)(void *context, void *job);
void authload_divert_global_jobs(void *context, authload_job_sink sink);

#endif
