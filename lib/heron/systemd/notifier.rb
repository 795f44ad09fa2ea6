# frozen_string_literal: true

require "socket"
require_relative "../clock"

module Heron
  module Systemd
    # sd_notify(3) written by hand: datagrams to the unix socket systemd names in NOTIFY_SOCKET
    # (a path, or an abstract name when it starts with "@"). Without NOTIFY_SOCKET every call is
    # a no-op, so callers never check. Sending never raises: a service manager that went away
    # must not take the server down with it.
    class Notifier
      # @param env [Hash] the environment to read NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID from.
      # @param pid [Integer] this process's pid (WATCHDOG_PID must match it when set).
      def initialize(env = ENV, pid: Process.pid)
        @path = env["NOTIFY_SOCKET"]
        @path = "\0#{@path[1..]}" if @path&.start_with?("@")
        @watchdog_interval = parse_watchdog_interval(env, pid)
        @last_watchdog = nil
      end

      # @return [Boolean] whether a service manager is listening.
      def enabled?
        !@path.nil? && !@path.empty?
      end

      # @return [Float, nil] seconds between WATCHDOG=1 pings (half of WATCHDOG_USEC), or nil.
      attr_reader :watchdog_interval

      # READY=1: the listeners are being accepted from.
      # @param status [String, nil] a STATUS= line sent along.
      # @param main_pid [Integer, nil] MAINPID=, when the service's main process changed (hot restart).
      # @return [Boolean] whether the datagram was sent.
      def ready(status: nil, main_pid: nil)
        notify({ "MAINPID" => main_pid, "READY" => 1, "STATUS" => status })
      end

      # RELOADING=1 (with MONOTONIC_USEC, as Type=notify-reload asks): a restart began.
      # @return [Boolean]
      def reloading
        usec = (Clock.now * 1_000_000).to_i
        notify({ "RELOADING" => 1, "MONOTONIC_USEC" => usec })
      end

      # STOPPING=1: a stop began.
      # @return [Boolean]
      def stopping
        notify({ "STOPPING" => 1 })
      end

      # @param text [String] a one-line status shown by `systemctl status`.
      # @return [Boolean]
      def status(text)
        notify({ "STATUS" => text })
      end

      # Sends WATCHDOG=1 when WATCHDOG_USEC is set and half of it passed since the last one.
      # @param status [String, nil] a STATUS= line sent along.
      # @return [Boolean] whether a ping was sent.
      def watchdog(status: nil)
        return false unless @watchdog_interval
        now = Clock.now
        return false if @last_watchdog && now - @last_watchdog < @watchdog_interval
        @last_watchdog = now
        notify({ "WATCHDOG" => 1, "STATUS" => status })
      end

      # Sends one datagram of KEY=VALUE lines (nil values are left out).
      # @param fields [Hash{String => Object}]
      # @return [Boolean] whether it was sent.
      def notify(fields)
        return false unless enabled?
        message = fields.filter_map { |key, value| "#{key}=#{value.to_s.tr("\n", ' ')}" unless value.nil? }
        send_datagram(message.join("\n"))
      end

      private

      def send_datagram(message)
        socket = Socket.new(:UNIX, :DGRAM)
        socket.connect(Socket.sockaddr_un(@path))
        socket.sendmsg(message)
        true
      rescue SystemCallError, IOError, ArgumentError
        false
      ensure
        socket&.close
      end

      def parse_watchdog_interval(env, pid)
        usec = Integer(env["WATCHDOG_USEC"] || "", exception: false)
        watchdog_pid = env["WATCHDOG_PID"]
        return nil unless usec&.positive?
        return nil if watchdog_pid && !watchdog_pid.empty? && watchdog_pid.to_i != pid
        usec / 2_000_000.0
      end
    end
  end
end
