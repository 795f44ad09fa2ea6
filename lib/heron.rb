# frozen_string_literal: true

require_relative "heron/version"
require_relative "heron/config/configuration"

# Heron: a fiber-concurrent HTTP/1.1 server for Rack 3 apps.
module Heron
end
