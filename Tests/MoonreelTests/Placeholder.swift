import Testing
import MoonreelKit

@Suite struct PlaceholderTests {
    @Test func addsAcrossTimescales() {
        let a = MediaTime(value: 1, timescale: 30)
        let b = MediaTime(value: 1, timescale: 25)
        #expect(a + b == MediaTime(value: 11, timescale: 150))
    }
}
