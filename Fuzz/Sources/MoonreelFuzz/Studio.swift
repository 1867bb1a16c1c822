import Foundation
import Glibc
import MoonreelEngine
import MoonreelStudio

/// Requests built from the input, sent to a studio serving a small edit (a 2 s test pattern
/// with a tone) over loopback: any method, a path under the studio's token or beside it,
/// query values from the input (numbers like 1e300, -0, nan, huge integers), the Host and
/// Origin headers, and a body of the input's bytes for the POST routes. The routes may refuse
/// anything; the finding is the studio dying (a trap or a sanitizer report in this process)
/// or no longer answering a plain request for its state.
func fuzzStudio(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = StudioInput(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let studio = FuzzedStudio.shared
    let routes = ["state", "frame", "audio", "parameters", "export", "app.js", "", "events", "../state", "frame/../audio"]
    let keys = ["item", "t", "start", "duration", "lane", "format"]
    let numbers = ["0", "1", "-1", "1e300", "-1e300", "nan", "inf", "9223372036854775807", "0.5", "10", "1e-320", "", "x"]
    var query: [String] = []
    for _ in 0..<Int(input.next() % 5) {
        query.append(input.pick(keys) + "=" + (input.next() % 4 == 0 ? input.text() : input.pick(numbers)))
    }
    let method = input.pick(["GET", "POST", "PUT", "GET"])
    let prefix = input.next() % 8 == 0 ? "/nottoken/" : studio.path
    let target = prefix + input.pick(routes) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    let host = input.next() % 8 == 0 ? "evil.example" : studio.host
    let body = Array(input.rest())
    var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
    if input.next() % 4 == 0 { head += "Origin: http://\(input.next() % 2 == 0 ? host : "evil.example")\r\n" }
    _ = studio.exchange(Array((head + "\r\n").utf8) + body)
    // The studio still answers.
    let plain = "GET \(studio.path)state HTTP/1.1\r\nHost: \(studio.host)\r\nConnection: close\r\n\r\n"
    guard String(decoding: studio.exchange(Array(plain.utf8)).prefix(12), as: UTF8.self) == "HTTP/1.1 200" else {
        fatalError("the studio stopped answering after: \(target)")
    }
    return 0
}

/// One studio for the whole run, showing a small edit.
final class FuzzedStudio: @unchecked Sendable {
    static let shared = FuzzedStudio()

    let studio: Studio
    let port: UInt16
    let host: String
    /// "/TOKEN/".
    let path: String

    private init() {
        let folder = NSTemporaryDirectory() + "moonreel-fuzz-studio-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let clip = folder + "/pattern.mp4"
        do {
            try TestPattern.write(to: clip, seconds: 2, width: 160, height: 90)
            let asset = try Asset(path: clip)
            let composition = Composition()
            try composition.insertTimeRange(TimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
            let session = StudioSession(source: .edit(name: "fuzz"), options: StudioSession.Options())
            try session.show(composition: composition, videoComposition: nil)
            studio = try Studio(session: session)
        } catch {
            fatalError("the fuzzed studio could not start: \(error)")
        }
        // http://127.0.0.1:PORT/TOKEN/
        let address = studio.server.url.dropFirst("http://".count)
        let hostEnd = address.firstIndex(of: "/") ?? address.endIndex
        host = String(address[..<hostEnd])
        path = String(address[hostEnd...])
        port = UInt16(host.split(separator: ":").last.flatMap { UInt16($0) } ?? 0)
    }

    /// Sends `request` and returns what comes back before the studio closes (at most 1 MiB, 5 s).
    func exchange(_ request: [UInt8]) -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return [] }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // libFuzzer's timeout alarm (SIGALRM, every second) interrupts these calls: EINTR is
        // not the studio's answer, so each is tried again (a connect once interrupted
        // completes in the background: EISCONN/EALREADY then mean connected or on its way).
        var connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        while connected != 0 && (errno == EINTR || errno == EALREADY) {
            var writable = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            connected = poll(&writable, 1, 5000) == 1 ? 0 : (errno == EINTR ? -1 : -2)
            if connected == -1 { errno = EINTR }
        }
        guard connected == 0 else { return [] }
        var sent = 0
        while sent < request.count {
            let count = request.withUnsafeBytes { bytes in
                bytes.baseAddress.map { send(socket, $0 + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            sent += count
        }
        var reply: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65536)
        while reply.count < 1 << 20 {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            reply += buffer[0..<count]
        }
        return reply
    }
}

/// Reads choices and text from the input, then its remaining bytes as a body.
struct StudioInput {
    private let bytes: [UInt8]
    private var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func pick(_ choices: [String]) -> String { choices[Int(next()) % choices.count] }

    /// Up to 16 bytes as query-safe text (percent-encoded where it must be).
    mutating func text() -> String {
        (0..<Int(next() % 16)).map { _ in String(format: "%%%02X", next()) }.joined()
    }

    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.count }
        return bytes[min(position, bytes.count)...]
    }
}
