# frozen_string_literal: true

# A Rack 2.2 app as Rack 2 apps are written: mixed-case headers in a Rack::Utils::HeaderHash,
# Set-Cookie values joined with "\n", a body read, rewound and read again, the env keys Rack 2's
# SPEC promises. Rack::Lint (Rack 2's) checks the env and the response.
require "json"

app = lambda do |env|
  input = env["rack.input"]
  first = input.read
  input.rewind
  again = input.read
  headers = Rack::Utils::HeaderHash.new("Content-Type" => "application/json")
  Rack::Utils.set_cookie_header!(headers, "a", "1")
  Rack::Utils.set_cookie_header!(headers, "b", "2")
  facts = {
    rack: Rack.release, version: env["rack.version"], multithread: env["rack.multithread"],
    multiprocess: env["rack.multiprocess"], run_once: env["rack.run_once"], body: first,
    rewound: again, hijack: env["rack.hijack?"]
  }
  [200, headers, [JSON.generate(facts)]]
end

use Rack::Lint
run app
