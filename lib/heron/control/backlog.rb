# frozen_string_literal: true

require "socket"

module Heron
  module Control
    # How many connections wait in the kernel's accept queue of TCP listeners, read from
    # TCP_INFO (on a Linux listening socket, `tcpi_unacked` is the queue's length). One
    # `getsockopt` per listener; nil where the platform does not tell.
    module Backlog
      UNACKED_OFFSET = 24 # 8 one-byte fields, then rto, ato, snd_mss, rcv_mss (u32 each)
      private_constant :UNACKED_OFFSET

      module_function

      # @param listeners [Array<BasicSocket>]
      # @return [Integer, nil] the connections waiting to be accepted, summed; nil if unknown.
      def total(listeners)
        counts = listeners.map { |listener| queued(listener) }
        counts.include?(nil) || counts.empty? ? nil : counts.sum
      end

      # @param listener [BasicSocket]
      # @return [Integer, nil]
      def queued(listener)
        return nil unless defined?(Socket::TCP_INFO) && listener.local_address.ip?
        info = listener.getsockopt(Socket::IPPROTO_TCP, Socket::TCP_INFO).data
        info.byteslice(UNACKED_OFFSET, 4)&.unpack1("L")
      rescue SystemCallError, IOError
        nil
      end
    end
  end
end
