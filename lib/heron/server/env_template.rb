# frozen_string_literal: true

require "rack"
require_relative "../version"
require_relative "../native"
Heron::Native.load("heron_ext")

module Heron
  class Server
    # The env entries that are the same for every request a server handles.
    module EnvTemplate
      # Entries a request's env has room for from the start (a power of two): the template's, the
      # parser's and Heron's own (about 24 for a request with a Host header) and a few more
      # headers. See `with_room` (C: ext/heron/heron_server_env_template.c).
      ROOM = 32

      # @param config [Configuration]
      # @return [Hash] frozen entries to copy into each request's env, in a Hash with room for
      #   {ROOM} entries (copies keep it).
      def self.build(config)
        with_room(entries(config), ROOM)
      end

      # @param config [Configuration]
      # @return [Hash] the template's entries.
      def self.entries(config)
        {
          "SCRIPT_NAME" => "",
          "SERVER_SOFTWARE" => "Heron/#{VERSION}",
          "rack.errors" => config.error_io,
          "rack.multithread" => config.threads > 1,
          "rack.multiprocess" => config.workers.positive?,
          "rack.run_once" => false,
          "rack.hijack?" => true,
          "rack.url_scheme" => "http",
        }.merge(rack2)
      end

      # Rack 2's SPEC requires `rack.version` (Rack 3 dropped it).
      # @return [Hash]
      def self.rack2
        Rack.release < "3" ? { "rack.version" => Rack::VERSION } : {}
      end
    end
  end
end
