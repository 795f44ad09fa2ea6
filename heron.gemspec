# frozen_string_literal: true

require_relative "lib/heron/version"

Gem::Specification.new do |spec|
  spec.name = "heron"
  spec.version = Heron::VERSION
  spec.authors = ["Heron maintainers"]
  spec.summary = "A fiber-concurrent HTTP/1.1 server for Rack 3 and Rack 2.2 apps"
  spec.description = "Heron serves Rack apps with a fiber per connection under Ruby's " \
                     "Fiber::Scheduler, a strict C request parser, after-reply callbacks, " \
                     "100-continue, built-in request profiling and an open-loop load generator."
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.files = Dir["lib/**/*.rb", "ext/heron/*.{c,h,rb,rl}", "ext/heron_profiler/*.{c,h,rb}", "exe/*", "README.md", "docs/*.md"]
  spec.bindir = "exe"
  spec.executables = ["heron"]
  spec.extensions = ["ext/heron/extconf.rb", "ext/heron_profiler/extconf.rb"]
  spec.require_paths = ["lib"]

  spec.add_dependency "async", "~> 2.24.0"
  spec.add_dependency "rack", ">= 2.2", "< 4"
  spec.add_dependency "rackup", ">= 1.0"
  spec.add_dependency "protocol-http2", ">= 0.22", "< 1"
end
