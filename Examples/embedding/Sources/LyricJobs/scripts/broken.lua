-- A user's script with a mistake: the app shows the typed error it gets.
local asset = av.asset(arg[1])
local track = asset:tracksWithMediaType("video")[1]
local comp = av.composition()
comp:addMutableTrack("video"):insertTimeRange(av.range(0, 2), trak, 0)   -- "trak": a typo
