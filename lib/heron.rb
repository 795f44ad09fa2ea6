# frozen_string_literal: true

require_relative "heron/version"
require_relative "heron/configuration"

# Heron: a fiber-concurrent HTTP/1.1 server for Rack 3 apps.
#
# Start with {Heron::Launcher} (what `heron` and `rackup -s heron` use), or build a
# {Heron::Server} directly. See docs/architecture.md for how one request flows through.
module Heron
end

require_relative "heron/launcher"
require_relative "heron/railtie" if defined?(::Rails::Railtie)
