return { name = "heavy", parameters = { { name = "keep", type = "integer", default = 0 } },
  apply = function(p)
    local kept = {}
    for i = 1, p.keep do kept[i] = { i, tostring(i) } end
    local root = av.layer{}
    for i = 1, 4000 do
      local l = av.textLayer{ string = "x" .. i, fontSize = 20, frame = { 0, 0, 50, 30 } }
      l:addAnimation(av.basicAnimation{ keyPath = "opacity", fromValue = 0, toValue = 1, duration = 1 }, "a")
      root:addSublayer(l)
    end
    return root
  end }
