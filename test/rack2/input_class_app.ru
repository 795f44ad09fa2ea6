# frozen_string_literal: true

# Reports which rack.input a Rack 2 app gets (no Lint, which would wrap it), and that it rewinds.
run lambda { |env|
  input = env["rack.input"]
  first = input.read(3)
  input.rewind
  [200, { "Content-Type" => "text/plain" }, ["#{input.class} #{first} #{input.read}"]]
}
