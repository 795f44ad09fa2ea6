# frozen_string_literal: true

require "json"
require "socket"

module Heron
  class Binder
    # Listening sockets a process did not open itself but found open at start-up:
    #
    # - from a hot restart: HERON_LISTEN_FDS is a JSON object mapping fd numbers to the bind URI
    #   each was opened for (or to "systemd:NAME" for one systemd passed to the old process);
    # - from systemd socket activation: LISTEN_PID (this process), LISTEN_FDS (how many, from fd 3)
    #   and LISTEN_FDNAMES (their names, colon-separated).
    #
    # Keys starting with "control:" are the control listener's ({Control::Server#key}); it claims
    # them itself. Both variables are removed from ENV once read, so a later child does not take them as its own.
    class Inherited
      SD_LISTEN_FDS_START = 3
      ENV_KEYS = %w[HERON_LISTEN_FDS LISTEN_FDS LISTEN_PID LISTEN_FDNAMES].freeze
      private_constant :SD_LISTEN_FDS_START, :ENV_KEYS

      class << self
        # Reads (once per process) and returns the inherited listeners.
        # @param env [Hash]
        # @return [Inherited]
        def take(env = ENV)
          @taken = nil if @taken && @taken.pid != Process.pid
          @taken ||= new(env).tap { ENV_KEYS.each { |key| env.delete(key) } }
        end
      end

      # @return [Integer] the pid that read them.
      attr_reader :pid

      # @param env [Hash]
      def initialize(env)
        @pid = Process.pid
        @by_key = {}
        from_restart(env["HERON_LISTEN_FDS"])
        from_systemd(env)
      end

      # @return [Hash{String => BasicSocket}] systemd's listeners by key ("systemd:NAME").
      def systemd
        @by_key.select { |key, _| key.start_with?("systemd:") }
      end

      # Takes the listener handed over for a bind URI.
      # @param uri [String]
      # @return [BasicSocket, nil]
      def claim(uri)
        @by_key.delete(uri)
      end

      # Closes the handed-over listeners nobody claimed (binds removed from the config).
      # @return [Array<String>] their keys.
      def close_unclaimed
        unclaimed = @by_key.reject { |key, _| key.start_with?("systemd:", "control:") }
        unclaimed.each_value(&:close)
        unclaimed.each_key { |key| @by_key.delete(key) }
        unclaimed.keys
      end

      private

      def from_restart(json)
        return if json.nil? || json.empty?
        JSON.parse(json).each { |fd, key| @by_key[key] = socket(Integer(fd)) }
      rescue JSON::ParserError, ArgumentError, TypeError, SystemCallError => e
        raise BindError, "HERON_LISTEN_FDS #{json.inspect} is not usable: #{e.message}"
      end

      def from_systemd(env)
        count = Integer(env["LISTEN_FDS"] || "", exception: false)
        return unless count&.positive? && env["LISTEN_PID"].to_i == Process.pid
        names = env["LISTEN_FDNAMES"].to_s.split(":")
        count.times do |index|
          @by_key["systemd:#{names[index] || index}"] = socket(SD_LISTEN_FDS_START + index)
        end
      rescue SystemCallError, IOError => e
        raise BindError, "LISTEN_FDS=#{count}: descriptor #{SD_LISTEN_FDS_START + @by_key.size} is not a " \
                         "listening socket (#{e.message})"
      end

      def socket(fd)
        probe = Socket.for_fd(fd)
        probe.autoclose = false
        (probe.local_address.unix? ? UNIXServer : TCPServer).for_fd(fd)
      end
    end
  end
end
