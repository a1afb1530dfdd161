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

static inline int authload_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static inline int authload_errno(void) { return errno; }

/// Monotonic nanoseconds, the time base of the event loops' timers and request timing.
static inline long long authload_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/// CPU time (user + system) this process has used, in microseconds.
static inline long long authload_process_cpu_us(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL
        + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/// Peak resident set size of this process, in kilobytes.
static inline long authload_peak_rss_kb(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return ru.ru_maxrss;
}

static inline int authload_ignore_sigpipe(void) {
    return signal(SIGPIPE, SIG_IGN) == SIG_ERR ? -1 : 0;
}
#endif

#endif
