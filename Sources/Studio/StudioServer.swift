import Foundation
import MoonreelEngine
import MoonreelBindings
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// The studio's web server: the page, its assets, the session's state, preview pictures
/// and sound, parameter changes, the Export button, and an event socket — under a random
/// token, for the Host names of the address it listens on only, and never a file by path.
public final class StudioServer: Sendable {
    /// What it serves.
    public let session: StudioSession
    /// The address the page is at (the token included).
    public let url: String
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    /// Listens on `host`:`port` (0: a free port).
    /// - Throws: `StudioError` when the address cannot be bound.
    public init(session: StudioSession, host: String = "127.0.0.1", port: Int = 0) throws {
        self.session = session
        let token = StudioServer.randomToken()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = StudioRoutes(session: session, token: token)
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { channel, head in
                channel.eventLoop.makeSucceededFuture(routes.acceptsEvents(head) ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StudioEventsHandler(events: session.events))
                }
            })
        let connections = Connections()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                // At the cap, the oldest connection still waiting for its request head goes;
                // with none such, the new one is closed.
                guard connections.open(channel) else { return channel.close() }
                channel.closeFuture.whenComplete { _ in connections.close(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    let handler = StudioHTTPHandler(routes: routes, connections: connections)
                    let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(bound.value, promise: nil)
                        }))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        do {
            channel = try bootstrap.bind(host: host, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw StudioError("cannot listen on \(host):\(port): \(error)")
        }
        self.group = group
        let boundPort = channel.localAddress?.port ?? port
        let shownHost = host.contains(":") ? "[\(host)]" : host
        routes.allowedHosts.withLock { $0 = StudioServer.allowedHosts(listeningOn: host, port: boundPort) }
        url = "http://\(shownHost):\(boundPort)/\(token)/"
    }

    /// Stops listening and closes every connection.
    public func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Blocks until the server stops.
    public func wait() { try? channel.closeFuture.wait() }

    /// 128 random bits as hex, from the kernel's generator.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// The Host headers a browser sends for this address: anything else is a DNS-rebinding
    /// page (a name of the attacker's that resolves to 127.0.0.1) and is refused.
    static func allowedHosts(listeningOn host: String, port: Int) -> Set<String> {
        var names: Set<String> = [host.contains(":") ? "[\(host)]" : host]
        if ["127.0.0.1", "::1", "localhost"].contains(host) { names.formUnion(["127.0.0.1", "localhost", "[::1]"]) }
        return Set(names.map { "\($0):\(port)" })
    }
}

/// What each URL does. The page's URLs all start with `/TOKEN/`; nothing else is served.
final class StudioRoutes: Sendable {
    let session: StudioSession
    let token: String
    let allowedHosts = Mutex<Set<String>>([])

    init(session: StudioSession, token: String) {
        self.session = session
        self.token = token
    }

    struct Response: Sendable {
        var status: HTTPResponseStatus
        var contentType: String
        var body: [UInt8]
        var headers: [(String, String)] = []

        static func text(_ status: HTTPResponseStatus, _ message: String) -> Response {
            Response(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
        }

        static func json(_ data: Data, status: HTTPResponseStatus = .ok) -> Response {
            Response(status: status, contentType: "application/json", body: Array(data))
        }
    }

    /// Why a request is refused before its path is looked at, or nil.
    func refusal(_ head: HTTPRequestHead) -> Response? {
        guard let host = head.headers.first(name: "host"), allowedHosts.withLock({ $0.contains(host.lowercased()) }) else {
            return .text(.forbidden, "this studio answers only to its own address (Host header refused)")
        }
        return nil
    }

    /// The path after `/TOKEN/`, or nil when the token is missing or wrong.
    func localPath(_ uri: String) -> (path: String, query: [String: String])? {
        let (path, query) = Self.split(uri)
        let prefix = "/\(token)/"
        guard path.utf8.count >= prefix.utf8.count,
              Self.constantTimeEqual(Array(path.utf8.prefix(prefix.utf8.count)), Array(prefix.utf8)) else { return nil }
        return (String(path.dropFirst(prefix.count)), query)
    }

    func acceptsEvents(_ head: HTTPRequestHead) -> Bool {
        guard refusal(head) == nil, localPath(head.uri)?.path == "events" else { return false }
        // A page of another site cannot open the socket even if it learnt the token.
        guard let origin = head.headers.first(name: "origin") else { return true }
        return allowedHosts.withLock { hosts in hosts.contains { origin == "http://\($0)" } }
    }

    /// Answers one request; runs off the event loop (it may render).
    func respond(_ head: HTTPRequestHead, body: [UInt8]) -> Response {
        if let refused = refusal(head) { return refused }
        guard let (path, query) = localPath(head.uri) else { return .text(.notFound, "not found (the studio's address has a token: use the URL it printed)") }
        switch (head.method, path) {
        case (.GET, ""): return asset("index.html")
        case (.GET, "app.js"), (.GET, "style.css"): return asset(path)
        case (.GET, "state"): return .json(session.stateJSON())
        case (.GET, "frame"): return frame(query)
        case (.GET, "audio"): return audio(query)
        case (.GET, "effects"): return effects()
        case (.GET, "effect-still"): return effectStill(query)
        case (.POST, "parameters"): return parameters(body)
        case (.POST, "export"): return export(body)
        default: return .text(.notFound, "not found: \(path)")
        }
    }

    private func asset(_ name: String) -> Response {
        guard let page = StudioPage.files[name] else { return .text(.notFound, "not found: \(name)") }
        return Response(status: .ok, contentType: page.type, body: page.bytes)
    }

    private func frame(_ query: [String: String]) -> Response {
        guard let item = query["item"].flatMap(Int.init), let time = query["t"].flatMap(Double.init), time.isFinite else {
            return .text(.badRequest, "frame needs item=N and t=SECONDS")
        }
        do {
            let lane: PreviewLane = query["lane"] == "play" ? .playback : .scrub
            // PNG on request: the exact pixels, for a user who saves a frame.
            let png = query["format"] == "png"
            let started = ContinuousClock.now
            let frame = try session.frame(item: item, at: time, lane: lane, format: png ? .png : .jpeg)
            let milliseconds = (ContinuousClock.now - started) / .milliseconds(1)
            return Response(status: .ok, contentType: png ? "image/png" : "image/jpeg", body: frame.bytes,
                            headers: [("X-Frame-Time", String(frame.seconds)), ("X-Frame-Number", String(frame.number)),
                                      ("X-Frame-Cache", frame.cached ? "hit" : "miss"),
                                      ("Server-Timing", "render;dur=\(String(format: "%.1f", milliseconds))")])
        } catch {
            return .text(.unprocessableEntity, "\(error)".oneLine)
        }
    }

    private func audio(_ query: [String: String]) -> Response {
        guard let item = query["item"].flatMap(Int.init), let start = query["start"].flatMap(Double.init),
              let duration = query["duration"].flatMap(Double.init), start.isFinite, duration.isFinite, start >= 0,
              duration > 0, duration <= 10 else {
            return .text(.badRequest, "audio needs item=N, start=SECONDS and duration=SECONDS (at most 10)")
        }
        do {
            let rate = try session.audioSampleRate(item: item)
            // A start no sample count can hold (1e300 s) is the asker's mistake, not a trap.
            guard let first = Int64(exactly: (start * Double(rate)).rounded()), let count = Int64(exactly: (duration * Double(rate)).rounded()),
                  first <= Int64.max - count else {
                return .text(.badRequest, "audio start \(start) s is past any sound")
            }
            let sound = try session.audio(item: item, startSample: first, count: count)
            let bytes = sound.samples.withUnsafeBytes { Array($0) }  // little-endian on every machine Swift runs on Linux
            return Response(status: .ok, contentType: "application/octet-stream", body: bytes,
                            headers: [("X-Sample-Rate", String(sound.sampleRate)), ("X-Channels", String(sound.channels)),
                                      ("X-Start", String(Double(first) / Double(rate)))])
        } catch {
            return .text(.unprocessableEntity, "\(error)".oneLine)
        }
    }

    private func effects() -> Response {
        do { return .json(try session.effects.listJSON()) } catch { return .text(.unprocessableEntity, "\(error)".oneLine) }
    }

    private func effectStill(_ query: [String: String]) -> Response {
        guard let name = query["name"], !name.isEmpty else { return .text(.badRequest, "effect-still needs name=EFFECT") }
        do {
            let still = try session.effects.still(named: name)
            // The Lua that uses it, percent-encoded: a stranger's example must not break the header.
            let usage = still.usage.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            return Response(status: .ok, contentType: "image/jpeg", body: still.jpeg, headers: [("X-Effect-Usage", usage)])
        } catch {
            return .text(.unprocessableEntity, "\(error)".oneLine)
        }
    }

    private func parameters(_ body: [UInt8]) -> Response {
        guard let request = try? JSONDecoder().decode(ParameterChange.self, from: Data(body)),
              request.resetAll == true || (request.name != nil && (request.value != nil || request.reset == true)) else {
            return .text(.badRequest, #"parameters needs {"effect": ID, "name": NAME, "value": NUMBER, STRING or BOOLEAN}, "reset": true in place of the value, or {"resetAll": true}"#)
        }
        do {
            let value = request.reset == true ? nil : request.value?.scriptValue
            if request.resetAll == true {
                session.resetParameters()
            } else if let name = request.name, request.script == true {
                try session.setScriptParameter(name: name, value: value)
            } else if let name = request.name {
                guard let effect = request.effect else { throw StudioError(#"parameters needs "effect": ID or "script": true"#) }
                try session.setParameter(effect: effect, name: name, value: value)
            }
            return .json(session.stateJSON())
        } catch {
            // The refusal with the state it left (the value taken back), so the page shows
            // the values the server uses beside the reason.
            let state = (try? JSONSerialization.jsonObject(with: session.stateJSON())) ?? [:]
            let reply = ["error": ["message": "\(error)".oneLine], "state": state] as [String: Any]
            return .json((try? JSONSerialization.data(withJSONObject: reply)) ?? Data(), status: .unprocessableEntity)
        }
    }

    private func export(_ body: [UInt8]) -> Response {
        let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        do {
            try session.startExport(item: (request?["item"] as? Int) ?? 0)
            return .text(.accepted, "export started")
        } catch {
            return .text(.conflict, "\(error)".oneLine)
        }
    }

    /// A `POST parameters` body.
    struct ParameterChange: Decodable {
        enum Value: Decodable {
            case flag(Bool), number(Double), text(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
                else if let number = try? container.decode(Double.self) { self = .number(number) }
                else { self = .text(try container.decode(String.self)) }
            }

            var scriptValue: ScriptValue {
                switch self {
                case .flag(let flag): .bool(flag)
                case .number(let number): .number(number)
                case .text(let text): .string(text)
                }
            }
        }

        let effect: String?
        let script: Bool?
        let name: String?
        let value: Value?
        /// Puts back the script's own value of `name`.
        let reset: Bool?
        /// Puts back every value the script gives.
        let resetAll: Bool?
    }

    static func split(_ uri: String) -> (String, [String: String]) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                query[key] = kv.count == 2 ? String(kv[1]).removingPercentEncoding ?? String(kv[1]) : ""
            }
        }
        return (String(parts.first ?? ""), query)
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// Reads HTTP requests (bodies up to 1 MiB), answers them off the event loop, in order.
final class StudioHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let maxBody = 1 << 20
    /// How long a connection has to send a whole request head, from its opening or its last
    /// response: half a header held open is a connection nobody else can use.
    static let headDeadline = TimeAmount.seconds(10)
    private let routes: StudioRoutes
    private var deadline: Scheduled<Void>?
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false

    private let connections: Connections

    init(routes: StudioRoutes, connections: Connections) { (self.routes, self.connections) = (routes, connections) }

    func handlerAdded(context: ChannelHandlerContext) { armDeadline(context) }

    /// Also on a WebSocket upgrade, which removes this handler: the socket then stays open.
    func handlerRemoved(context: ChannelHandlerContext) { deadline?.cancel() }

    private func armDeadline(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: Self.headDeadline) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            deadline?.cancel()
            connections.headReceived(context.channel)
            self.head = head
            body = []
            tooLarge = false
        case .body(let buffer):
            if body.count + buffer.readableBytes > Self.maxBody { tooLarge = true } else { body += buffer.readableBytesView }
        case .end:
            guard let head else { return }
            self.head = nil
            if tooLarge {
                write(.text(.payloadTooLarge, "request body over 1 MiB"), for: head, context: context)
                return
            }
            let (routes, body) = (routes, body)
            let promise = context.eventLoop.makePromise(of: StudioRoutes.Response.self)
            DispatchQueue.global(qos: .userInitiated).async { promise.succeed(routes.respond(head, body: body)) }
            promise.futureResult.assumeIsolated().whenSuccess { [self] response in
                write(response, for: head, context: context)
            }
        }
    }

    private func write(_ response: StudioRoutes.Response, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        // The token is in every URL: no page may receive it as a referrer.
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "Content-Security-Policy",
                    value: "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'none'")
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        var responseHead = HTTPResponseHead(version: head.version, status: response.status, headers: headers)
        responseHead.headers.replaceOrAdd(name: "Connection", value: head.isKeepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let keepAlive = head.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [self] _ in
            if keepAlive { armDeadline(context) } else { context.close(promise: nil) }
        }
    }
}

/// The connections the server holds open, at most `limit`, and which of them are still
/// waiting for a request head (oldest first): about a thousand sockets each sending half a
/// header locked the page out.
final class Connections: Sendable {
    static let limit = 256
    private struct State {
        var open = Set<ObjectIdentifier>()
        var waiting: [(id: ObjectIdentifier, channel: Channel)] = []
    }
    private let state = Mutex(State())

    /// Takes `channel` in; at the limit, closes the oldest one waiting for its head to make
    /// room, or refuses `channel` (false) when every connection has sent one.
    func open(_ channel: Channel) -> Bool {
        let (accepted, evicted): (Bool, Channel?) = state.withLock { state in
            var evicted: Channel?
            if state.open.count >= Self.limit {
                guard !state.waiting.isEmpty else { return (false, nil) }
                let oldest = state.waiting.removeFirst()
                state.open.remove(oldest.id)
                evicted = oldest.channel
            }
            state.open.insert(ObjectIdentifier(channel))
            state.waiting.append((ObjectIdentifier(channel), channel))
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        return accepted
    }

    /// `channel` sent a whole request head: it is a client, not a held socket.
    func headReceived(_ channel: Channel) {
        state.withLock { state in state.waiting.removeAll { $0.id == ObjectIdentifier(channel) } }
    }

    func close(_ channel: Channel) {
        state.withLock { state in
            state.open.remove(ObjectIdentifier(channel))
            state.waiting.removeAll { $0.id == ObjectIdentifier(channel) }
        }
    }
}

/// The page's event socket: the session's events go out as text frames.
final class StudioEventsHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let events: StudioEvents
    private var listener: Int?

    init(events: StudioEvents) { self.events = events }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        listener = events.listen { text in
            var buffer = channel.allocator.buffer(capacity: text.utf8.count)
            buffer.writeString(text)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let listener { events.remove(listener) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: context.channel.allocator.buffer(capacity: 0))))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        default:
            break  // the page sends nothing the server needs
        }
    }
}
