import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `moonreel studio` process started by a test: its URL, plain HTTP requests to it (with
/// any Host header or path, as an attacker would send them), and SIGKILL at the end.
final class StudioProcess {
    let process = Process()
    let url: String
    let port: Int
    let token: String
    private let errors = Pipe()

    /// The studio's cache folder (its proxies): a fresh one unless given.
    let cache: String

    init(script: String, arguments: [String], options: [String] = [], cache: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: Moonreel.executable)
        process.arguments = ["studio"] + options + [script] + arguments
        self.cache = cache ?? Fixtures.scratchPath("cache")
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": self.cache]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The first line is "moonreel studio: URL".
        var line = Data()
        let deadline = Date().addingTimeInterval(60)
        while !line.contains(10), Date() < deadline, process.isRunning {
            line += output.fileHandleForReading.availableData
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let found = text.split(separator: " ").last.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }),
              found.hasPrefix("http://"), let components = URLComponents(string: found), let port = components.port else {
            kill(process.processIdentifier, SIGKILL)
            throw Tool.Failure(description: "moonreel studio printed no URL: \(text) \(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))")
        }
        url = found
        self.port = port
        token = components.path.split(separator: "/").first.map(String.init) ?? ""
    }

    deinit { stop() }

    func stop() {
        // Test processes may have SIGTERM blocked, and children inherit the mask.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct Response {
        let status: Int
        let headers: [String: String]
        let body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    /// `GET`/`POST` of `path` (after the host, sent as is), with `headers` (Host defaults to the studio's own).
    func request(_ method: String = "GET", _ path: String, headers: [String: String] = [:], body: Data = Data()) throws -> Response {
        try Self.request(port: port, method, path, headers: headers, body: body)
    }

    /// A request to a studio on `port` of this machine.
    static func request(port: Int, _ method: String = "GET", _ path: String, headers: [String: String] = [:], body: Data = Data()) throws -> Response {
        var all = ["Host": "127.0.0.1:\(port)", "Connection": "close", "Content-Length": String(body.count)]
        all.merge(headers) { $1 }
        let head = "\(method) \(path) HTTP/1.1\r\n" + all.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Tool.Failure(description: "socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Tool.Failure(description: "cannot connect to the studio on port \(port)") }
        let payload = Data(head.utf8) + body
        _ = payload.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Until the server closes, or the whole answer is here (a refused upgrade keeps
        // the connection; an accepted one never ends).
        while !Self.isComplete(received) {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        guard let split = received.range(of: Data("\r\n\r\n".utf8)) else { throw Tool.Failure(description: "no HTTP response to \(path)") }
        let lines = String(decoding: received[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var responseHeaders: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            responseHeaders[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: responseHeaders, body: received[split.upperBound...])
    }

    static func isComplete(_ received: Data) -> Bool {
        guard let split = received.range(of: Data("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: received[..<split.lowerBound], as: UTF8.self).lowercased()
        if head.hasPrefix("http/1.1 101") { return true }
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return false }
        return received.count - split.upperBound >= length
    }

    /// A path of the studio (after `/TOKEN/`).
    func get(_ path: String) throws -> Response { try request("GET", "/\(token)/\(path)") }

    func post(_ path: String, json: [String: Any]) throws -> Response {
        try request("POST", "/\(token)/\(path)", headers: ["Content-Type": "application/json"],
                    body: try JSONSerialization.data(withJSONObject: json))
    }

    /// The state's generation once it is past `generation` (the script ran again).
    func waitForGeneration(after generation: Int, timeout: Double = 20) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let state = try get("state").json
            if (state["generation"] as? Int ?? 0) > generation { return state }
            usleep(50_000)
        }
        throw Tool.Failure(description: "the studio did not run the script again within \(timeout) s")
    }

    /// What the studio wrote to standard error so far.
    var errorOutput: String { String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self) }
}
