package extension String {
    /// This text inside an XML or HTML attribute or element: `& < > " '` as entities and
    /// line breaks as `&#10;`, so no text can open a tag or end an attribute.
    var markupEscaped: String {
        var out = ""
        for character in self {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n": out += "&#10;"
            default: out.append(character)
            }
        }
        return out
    }
}
