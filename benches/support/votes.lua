-- wrk script for the vote ingest bench: each wrk thread sends its own share
-- of prepared votes (one line each: path, cookie, CSRF token, JSON body,
-- tab-separated), every vote once. Arguments: the votes file, the thread count.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  local file, count = args[1], tonumber(args[2])
  requests, n, next_request, exhausted = {}, 0, 1, 0
  local line_no = 0
  for line in io.lines(file) do
    if line_no % count == id then
      local path, cookie, csrf, body = line:match("([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)")
      n = n + 1
      requests[n] = wrk.format("POST", path,
        { ["Cookie"] = cookie, ["X-CSRF-Token"] = csrf, ["Content-Type"] = "application/json" }, body)
    end
    line_no = line_no + 1
  end
end

function request()
  local r = requests[next_request]
  next_request = next_request + 1
  if next_request > n then
    -- Out of fresh votes: start again (retries), and say so at the end.
    next_request, exhausted = 1, 1
  end
  return r
end

function done(summary, latency, requests)
  local out_of_work = 0
  for _, t in ipairs(threads) do
    out_of_work = out_of_work + t:get("exhausted")
  end
  io.write(string.format("VOTES ok=%d non2xx=%d errors=%d seconds=%.3f p50_ms=%.3f p99_ms=%.3f exhausted=%d\n",
    summary.requests - (summary.errors.status or 0), summary.errors.status or 0,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3, out_of_work))
end
