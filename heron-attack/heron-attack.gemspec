# frozen_string_literal: true

require_relative "lib/heron/attack/version"

Gem::Specification.new do |spec|
  spec.name = "heron-attack"
  spec.version = Heron::Attack::VERSION
  spec.authors = ["Heron maintainers"]
  spec.summary = "An open-loop HTTP load generator (`heron attack`)"
  spec.description = "Sends requests on a fixed schedule whatever the server does and measures " \
                     "latency from each request's due time (corrected for coordinated omission); " \
                     "text, JSON, CSV, HTML and HdrHistogram reports."
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.homepage = "https://github.com/heron-rb/heron"
  spec.metadata = {
    "homepage_uri" => spec.homepage,
    "source_code_uri" => "#{spec.homepage}/tree/main/heron-attack",
    "changelog_uri" => "#{spec.homepage}/blob/main/heron-attack/CHANGELOG.md",
    "bug_tracker_uri" => "#{spec.homepage}/issues",
    "documentation_uri" => "#{spec.homepage}/tree/main/heron-attack/docs",
    "rubygems_mfa_required" => "true",
  }

  spec.files = Dir["lib/**/*.rb", "exe/*", "README.md", "CHANGELOG.md", "LICENSE", "docs/*.md"]
  spec.bindir = "exe"
  spec.executables = ["heron-attack"]
  spec.require_paths = ["lib"]

  # Nothing of the server: heron-attack installs alone on a load box.
  spec.add_dependency "async", ">= 2.24", "< 3"
  # --http2: framing, flow control and HPACK (the core depends on it too, for serving HTTP/2).
  spec.add_dependency "protocol-http2", ">= 0.22", "< 1"
  # ws:// and wss:// load: WebSocket framing and masking.
  spec.add_dependency "protocol-websocket", ">= 0.17", "< 1"
  # Bundled (no longer default) gems from Ruby 3.4: --hdr-log and --csv. (HTML escaping uses
  # cgi/escape, which Ruby 3.5/4.0 keeps when it drops the rest of cgi.)
  spec.add_dependency "base64", ">= 0.1", "< 1"
  spec.add_dependency "csv", ">= 3.2", "< 4"
end
