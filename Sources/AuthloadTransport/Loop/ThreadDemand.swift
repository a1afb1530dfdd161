import AuthloadCore
import Foundation

/// How long one thread has run on a core or waited for one, in all, as the kernel's scheduler counts it
/// (`/proc/thread-self/schedstat`: time on a core, time runnable in a run queue).
///
/// What it leaves out is what makes a loop's saturation verdict honest (``LoopSaturation``): time the thread slept, in
/// `epoll_wait` with nothing to do or in a futex behind a lock another thread held, is not work. Time it waited for a
/// core is counted: the thread had work, and another thread or process on its core kept it from it.
///
/// Opened on the thread it measures (the file names the thread that opened it) and read there, once per saturation
/// window: one `pread` every 10 ms.
final class ThreadDemand {
    private let fd: Int32?
    private var buffer = [UInt8](repeating: 0, count: 96)

    /// Opens the calling thread's counters; ``read()`` says nil from then on when the kernel does not keep them.
    init() {
        let fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        self.fd = fd >= 0 ? fd : nil
    }

    deinit {
        if let fd { SystemCalls.close(fd) }
    }

    /// Run plus run-queue time so far; nil when the counters cannot be read.
    func read() -> Duration? {
        guard let fd else { return nil }
        let count: Int
        do throws(IOError) {
            guard
                case .processed(let read) = try syscall(blocking: false, where: "pread(schedstat)", { pread(fd, &buffer, buffer.count, 0) })
            else { return nil }
            count = read
        } catch {
            return nil
        }
        guard let (running, waiting) = Self.parse(buffer[..<count]) else { return nil }
        return .nanoseconds(running + waiting)
    }

    /// The first two fields of a schedstat line: nanoseconds on a core, nanoseconds waiting in a run queue.
    static func parse(_ line: ArraySlice<UInt8>) -> (running: Int64, waiting: Int64)? {
        var fields: [Int64] = []
        var value: Int64 = 0
        var digits = 0
        for byte in line {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value &* 10 &+ Int64(byte - UInt8(ascii: "0"))
                digits += 1
            } else {
                if digits > 0 { fields.append(value) }
                if fields.count == 2 { break }
                value = 0
                digits = 0
            }
        }
        if digits > 0 && fields.count < 2 { fields.append(value) }
        guard fields.count == 2 else { return nil }
        return (fields[0], fields[1])
    }
}
