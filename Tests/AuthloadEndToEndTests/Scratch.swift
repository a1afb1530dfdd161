import Foundation

/// Where the end-to-end tests write their profiles and reports: one directory per test process, removed when the
/// process exits, so a test run leaves nothing behind in the system's temporary directory.
private let scratchRoot = FileManager.default.temporaryDirectory.appendingPathComponent("authload-tests-\(getpid())").path

private let removeScratchAtExit: Void = {
    atexit { try? FileManager.default.removeItem(atPath: scratchRoot) }
}()

/// A new, empty directory for one test's files, under the process's scratch directory.
///
/// - Parameter purpose: a word for the directory's name, to tell what left it while the tests still run.
func scratchDirectory(_ purpose: String) throws -> String {
    _ = removeScratchAtExit
    let directory = (scratchRoot as NSString).appendingPathComponent("\(purpose)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}
