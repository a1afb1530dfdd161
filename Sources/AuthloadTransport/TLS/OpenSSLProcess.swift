import COpenSSL

/// OpenSSL as the process uses it.
public enum OpenSSLProcess {
    /// Starts OpenSSL without its exit handler, once, before any thread uses it.
    ///
    /// By default OpenSSL frees its global state (providers, the random generator, error strings) in an `atexit`
    /// handler. `exit` runs that handler on the main thread while threads the process does not join may still be in
    /// OpenSSL: a task finishing on Swift's pool, a connection freed on a stopped loop's queue. Freed under them, they
    /// crash after the report is written. The process's end frees the memory anyway.
    public static func start() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
