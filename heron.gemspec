# frozen_string_literal: true

require_relative "lib/heron/version"

Gem::Specification.new do |spec|
  spec.name = "heron"
  spec.version = Heron::VERSION
  spec.authors = ["Heron maintainers"]
  spec.summary = "A fiber-concurrent HTTP/1.1 and HTTP/2 server (TLS included) for Rack 3 and Rack 2.2 apps"
  spec.description = "Heron serves Rack apps with a fiber per connection under Ruby's " \
                     "Fiber::Scheduler, a strict C request parser, after-reply callbacks, " \
                     "100-continue and Prometheus metrics. Its profiler and load generator are " \
                     "the heron-profiler and heron-attack gems."
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.homepage = "https://github.com/heron-rb/heron"
  spec.metadata = {
    "homepage_uri" => spec.homepage,
    "source_code_uri" => spec.homepage,
    "changelog_uri" => "#{spec.homepage}/blob/main/CHANGELOG.md",
    "bug_tracker_uri" => "#{spec.homepage}/issues",
    "documentation_uri" => "#{spec.homepage}/tree/main/docs",
    "rubygems_mfa_required" => "true",
  }

  spec.files = Dir["lib/**/*.rb", "ext/heron/*.{c,h,rb,rl}", "exe/*", "README.md", "CHANGELOG.md", "LICENSE", "docs/*.md"]
  spec.bindir = "exe"
  spec.executables = ["heron"]
  spec.extensions = ["ext/heron/extconf.rb"]
  spec.require_paths = ["lib"]

  # async: only its public API is used (Task#async/#with_timeout/#stop, Notification, Condition,
  # Scheduler#yield, Scheduler#raise), stable across 2.x. io-event comes with async and is not pinned here: Bundler
  # picks the newest that supports the Ruby in use (1.11 on Ruby 3.1).
  spec.add_dependency "async", ">= 2.24", "< 3"
  spec.add_dependency "rack", ">= 2.2", "< 4"
  spec.add_dependency "rackup", ">= 1.0", "< 3"
  spec.add_dependency "protocol-http2", ">= 0.22", "< 1"
end
