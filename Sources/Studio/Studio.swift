import MoonreelPlatform

/// A running studio: the session, its server, and (for a script) the watcher that runs the
/// script again when it or a file it read changes.
public final class Studio: Sendable {
    /// What the page shows.
    public let session: StudioSession
    /// The web server; `server.url` is the page's address.
    public let server: StudioServer
    private let watcher: FileWatcher?

    /// Serves the session on `host`:`port`; a script is run once first, then again on every save.
    /// - Throws: `StudioError` when the address cannot be bound, `SystemError` when files
    ///   cannot be watched.
    public init(session: StudioSession, host: String = "127.0.0.1", port: Int = 0) throws {
        self.session = session
        server = try StudioServer(session: session, host: host, port: port)
        if case .script = session.source {
            session.reload()
            let watcher = try FileWatcher { [session] in session.reload() }
            session.events.onReload = { [weak watcher, session] in watcher?.watch(session.watchedFiles) }
            watcher.watch(session.watchedFiles)
            self.watcher = watcher
        } else {
            watcher = nil
        }
    }

    /// Stops watching and serving.
    public func stop() {
        watcher?.stop()
        session.stop()
        server.stop()
    }
}
