# frozen_string_literal: true

require "rack/handler"

# rackup 1.x, the release for Rack 2, has no handler registry; Rack 2's own takes its place, so
# lib/rackup/handler/heron.rb (which registers itself there) serves both.
module Rackup
  # Stands in for rackup 2's Rackup::Handler under Rack 2.
  module Handler
    # @param name [Symbol, String] e.g. :heron.
    # @param handler [Module] the handler.
    def self.register(name, handler)
      ::Rack::Handler.register(name, handler.name)
    end
  end
end

require_relative "../../rackup/handler/heron"

module Rack
  module Handler
    # Rack 2 looks handlers up here: Rack::Handler.get("heron") (`rackup -s heron`, Rails 7.0's
    # `rails server -u heron`) requires this file. It is the same handler rackup 2 uses.
    Heron = ::Rackup::Handler::Heron
  end
end
