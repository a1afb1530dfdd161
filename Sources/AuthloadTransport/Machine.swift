import AuthloadCore
import CSystem
import Foundation

/// Facts about the machine the generator runs on.
public enum Machine {
    /// The CPUs this process may use (a `taskset` narrows it), so loops match the cores actually there.
    public static var coreCount: Int { max(1, Int(authload_available_cpus())) }

    /// Raises the open-file limit to the hard limit and returns the new limit.
    @discardableResult
    public static func raiseFileLimit() -> Int { Sockets.raiseFileLimit() }
}
