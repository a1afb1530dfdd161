#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time this process has used (user + system), from getrusage.
///
/// Measured around a run, it tells whether the generator was short of CPU: a generator near all of its
/// cores cannot keep a schedule, whatever the server does. With an embedded target it includes the server.
enum ProcessCPU {
    static func seconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
