# frozen_string_literal: true

require "rack"
require_relative "../version"

module Heron
  class Server
    # The env entries that are the same for every request a server handles.
    module EnvTemplate
      # @param config [Configuration]
      # @return [Hash] frozen entries to copy into each request's env.
      def self.build(config)
        {
          "SCRIPT_NAME" => "",
          "SERVER_SOFTWARE" => "Heron/#{VERSION}",
          "rack.errors" => config.error_io,
          "rack.multithread" => config.threads > 1,
          "rack.multiprocess" => config.workers.positive?,
          "rack.run_once" => false,
          "rack.hijack?" => true,
          "rack.url_scheme" => "http",
        }.merge(rack2).freeze
      end

      # Rack 2's SPEC requires `rack.version` (Rack 3 dropped it).
      # @return [Hash]
      def self.rack2
        Rack.release < "3" ? { "rack.version" => Rack::VERSION } : {}
      end
    end
  end
end
