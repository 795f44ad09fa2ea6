# frozen_string_literal: true

require_relative "lib/heron/profiler/version"

Gem::Specification.new do |spec|
  spec.name = "heron-profiler"
  spec.version = Heron::Profiler::VERSION
  spec.authors = ["Heron maintainers"]
  spec.summary = "Per-request profiling for Rack apps: timings, SQL, N+1, allocations, a dashboard"
  spec.description = "Heron's profiler: a Rack middleware that measures every request (wall, CPU, " \
                     "reactor time, SQL with call sites, N+1 queries, allocations), answers with " \
                     "Server-Timing and keeps recent requests for its dashboard."
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.homepage = "https://github.com/heron-rb/heron"
  spec.metadata = {
    "homepage_uri" => spec.homepage,
    "source_code_uri" => "#{spec.homepage}/tree/main/heron-profiler",
    "changelog_uri" => "#{spec.homepage}/blob/main/heron-profiler/CHANGELOG.md",
    "bug_tracker_uri" => "#{spec.homepage}/issues",
    "documentation_uri" => "#{spec.homepage}/tree/main/heron-profiler/docs",
    "rubygems_mfa_required" => "true",
  }

  spec.files = Dir["lib/**/*.rb", "ext/heron_profiler/*.{c,h,rb}", "README.md", "CHANGELOG.md", "LICENSE", "docs/*.md"]
  spec.extensions = ["ext/heron_profiler/extconf.rb"]
  spec.require_paths = ["lib"]

  spec.add_dependency "async", ">= 2.24", "< 3"
  spec.add_dependency "rack", ">= 2.2", "< 4"
  # A default gem until Ruby 3.4, bundled from 3.5/4.0: Options' logger outside Heron.
  spec.add_dependency "logger", ">= 1.5", "< 2"
end
