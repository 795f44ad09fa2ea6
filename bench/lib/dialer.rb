# frozen_string_literal: true

require "socket"
require_relative "clock"

module Bench
  # Opens many TCP connections to one server, `batch` at a time, and counts the ones that fail by
  # kind in {#failures} (a Hash the caller adds its own kinds to). What each batch is for (a
  # request on each, a WebSocket handshake) is the caller's block.
  class Dialer
    # @return [Hash{String => Integer}] failures by kind.
    attr_reader :failures
    # @return [Integer] connections per batch.
    attr_reader :batch

    def initialize(host, port, batch:, connect_timeout:)
      @host = host
      @port = port
      @batch = batch
      @connect_timeout = connect_timeout
      @failures = Hash.new(0)
    end

    # Connects `count` sockets, a batch at a time, and yields each batch's connected sockets.
    # With `within` (seconds), batches that would start later are not tried (counted in
    # #failures as "not tried"), so a server that answers slowly does not hold the caller long.
    # @return [Integer] the sum of what the block returned for each batch.
    def each_batch(count, within: nil)
      give_up = within && Clock.now + within
      count.fdiv(@batch).ceil.times.sum do |index|
        size = [@batch, count - (index * @batch)].min
        next not_tried(size, within) if give_up && Clock.now > give_up
        yield Array.new(size) { connect }.compact
      end
    end

    private

    def connect
      Socket.tcp(@host, @port, connect_timeout: @connect_timeout)
    rescue SystemCallError, IOError => e
      @failures["connect: #{e.class}"] += 1
      nil
    end

    def not_tried(size, within)
      @failures["not tried (#{within} s limit)"] += size
      0
    end
  end
end
