// The engine's lower layers are targets of their own, so the compiler holds their order;
// re-exported here so `import MoonreelEngine` still brings the whole engine.
@_exported import MoonreelAnalysis
@_exported import MoonreelComposition
@_exported import MoonreelMedia
@_exported import MoonreelRender
