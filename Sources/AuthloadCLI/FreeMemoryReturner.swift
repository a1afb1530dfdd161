import CSystem

/// Hands the memory a run has freed back to the operating system every `period`, so that a soak's RSS
/// follows what the process holds rather than the high-water mark of its heap.
///
/// glibc keeps freed memory in its arenas, and a few long-lived blocks among short-lived ones stop it from
/// shrinking them; with thousands of users on several threads, a soak's RSS grows steadily while the memory in
/// use stays flat (malloc_stats shows it). `malloc_trim` releases the free pages inside the arenas too, in
/// milliseconds, and locks each arena only while it trims that one (docs/development.md, "Measured design choices").
struct FreeMemoryReturner: Sendable {
    var period: Duration = .seconds(10)

    /// Returns free memory every period until cancelled.
    func run() async {
        let clock = ContinuousClock()
        var next = clock.now.advanced(by: period)
        while true {
            do {
                try await clock.sleep(until: next, tolerance: .seconds(1))
            } catch {
                return
            }
            next = next.advanced(by: period)
            _ = authload_return_free_heap()
        }
    }
}
