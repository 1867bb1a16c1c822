import Foundation
@testable import MoonreelStudio
import NIOHTTP1
import Testing

/// The studio's routes as a pure function of the request — the host it answers to, the token
/// in its paths, the origin of an events socket, and each route's refusal of a request it
/// cannot serve — with no server, socket or script run (StudioTests drives the real server).
@Suite struct StudioRoutesTests {
    static let token = "0123456789abcdef"

    func routes() -> StudioRoutes {
        let routes = StudioRoutes(session: StudioSession(source: .edit(name: "routes"), options: StudioSession.Options()), token: Self.token)
        routes.allowedHosts.withLock { $0 = ["127.0.0.1:8080", "localhost:8080"] }
        return routes
    }

    func request(_ uri: String, method: HTTPMethod = .GET, host: String? = "127.0.0.1:8080", origin: String? = nil) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri)
        if let host { head.headers.add(name: "Host", value: host) }
        if let origin { head.headers.add(name: "Origin", value: origin) }
        return head
    }

    func text(_ response: StudioRoutes.Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func aRequestForAnotherHostIsRefusedBeforeItsPathIsRead() {
        let routes = routes()
        for host in ["evil.example:8080", "127.0.0.1:9999", nil] {
            let response = routes.respond(request("/\(Self.token)/state", host: host), body: [])
            #expect(response.status == .forbidden && text(response).contains("Host header refused"), "\(host ?? "no host")")
        }
        // A DNS-rebinding page names its own host; the studio's own names are case-blind.
        #expect(routes.respond(request("/\(Self.token)/state", host: "LOCALHOST:8080"), body: []).status == .ok)
    }

    @Test func onlyPathsUnderTheTokenAreServed() {
        let routes = routes()
        for uri in ["/", "/state", "/\(Self.token)", "/0123456789abcdeX/state", "/\(Self.token.dropLast())/state", "/../\(Self.token)/state"] {
            let response = routes.respond(request(uri), body: [])
            #expect(response.status == .notFound && text(response).contains("has a token"), "\(uri)")
        }
        let page = routes.respond(request("/\(Self.token)/"), body: [])
        #expect(page.status == .ok && page.contentType.hasPrefix("text/html"))
        #expect(routes.respond(request("/\(Self.token)/../etc/passwd"), body: []).status == .notFound)
        #expect(routes.respond(request("/\(Self.token)/state", method: .DELETE), body: []).status == .notFound)
    }

    @Test func anEventsSocketOpensOnlyFromTheStudiosOwnPage() {
        let routes = routes()
        #expect(routes.acceptsEvents(request("/\(Self.token)/events", origin: "http://127.0.0.1:8080")))
        #expect(routes.acceptsEvents(request("/\(Self.token)/events")), "no Origin: not a browser page")
        #expect(!routes.acceptsEvents(request("/\(Self.token)/events", origin: "http://evil.example")))
        #expect(!routes.acceptsEvents(request("/\(Self.token)/events", origin: "https://127.0.0.1:8080")))
        #expect(!routes.acceptsEvents(request("/wrong/events", origin: "http://127.0.0.1:8080")))
        #expect(!routes.acceptsEvents(request("/\(Self.token)/events", host: "evil.example:8080")))
    }

    @Test(arguments: [
        ("frame", "frame needs item=N and t=SECONDS"), ("frame?item=0&t=nan", "frame needs item=N and t=SECONDS"),
        ("audio?item=0&start=0&duration=11", "audio needs item=N, start=SECONDS and duration=SECONDS (at most 10)"),
        ("audio?item=0&start=-1&duration=1", "audio needs item=N"), ("effect-still?name=", "effect-still needs name=EFFECT"),
    ])
    func aRouteRefusesWhatItCannotServeSayingWhatItNeeds(_ route: String, _ message: String) {
        let response = routes().respond(request("/\(Self.token)/\(route)"), body: [])
        #expect(response.status == .badRequest && text(response).hasPrefix(message), "\(route): \(text(response))")
    }

    @Test func aParameterChangeIsReadStrictly() {
        let routes = routes()
        for body in ["", "not json", #"{"name": "size"}"#, #"{"value": 3}"#] {
            let response = routes.respond(request("/\(Self.token)/parameters", method: .POST), body: Array(body.utf8))
            #expect(response.status == .badRequest && text(response).hasPrefix("parameters needs"), "\(body)")
        }
        let unknown = routes.respond(request("/\(Self.token)/parameters", method: .POST), body: Array(#"{"effect": "e9", "name": "size", "value": 3}"#.utf8))
        let reply = (try? JSONSerialization.jsonObject(with: Data(unknown.body))) as? [String: Any]
        #expect(unknown.status == .unprocessableEntity && (reply?["error"] as? [String: Any])?["message"] != nil && reply?["state"] != nil, "\(text(unknown))")
    }

    @Test func aQueryIsSplitAndDecodedOnce() {
        let (path, query) = StudioRoutes.split("/t/frame?item=2&t=1.5&name=a%20b%26c&flag")
        #expect(path == "/t/frame" && query == ["item": "2", "t": "1.5", "name": "a b&c", "flag": ""])
        #expect(StudioRoutes.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!StudioRoutes.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)) && !StudioRoutes.constantTimeEqual(Array("ab".utf8), Array("abc".utf8)))
    }
}
