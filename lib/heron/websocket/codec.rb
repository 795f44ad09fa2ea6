# frozen_string_literal: true

require_relative "frame"
require_relative "frame_reader"

module Heron
  module WebSocket
    # What an upgraded WebSocket says on the wire, for Upgrade::Session: a String the app writes
    # becomes one frame (binary when its encoding is binary, text otherwise), pings are answered
    # by pongs, and the client's frames are read by a FrameReader.
    class Codec
      # @param max_message_size [Integer] see the `websocket_max_message_size` setting.
      def initialize(max_message_size)
        @reader = FrameReader.new(max_message_size)
      end

      # @return [Boolean] whether a silent peer is dead after a ping interval (it must answer pings).
      def answers_pings? = true

      # @param data [String]
      # @return [String] the frame for one message.
      # @raise [ArgumentError] for text that is not valid UTF-8 (a client would fail the connection).
      def message(data)
        return Frame.build(Frame::BINARY, data) if data.encoding == Encoding::BINARY
        raise ArgumentError, "a text message must be valid UTF-8" unless data.valid_encoding?
        Frame.build(Frame::TEXT, data)
      end

      # @return [String] a ping frame.
      def ping = Frame.build(Frame::PING, "")

      # @param payload [String] the ping's payload.
      # @return [String] the pong frame answering it.
      def pong(payload) = Frame.build(Frame::PONG, payload)

      # @param code [Integer]
      # @param reason [String]
      # @return [String] a close frame.
      def close(code, reason = "") = Frame.close(code, reason)

      # @param buffer [String] see FrameReader#read.
      # @return [Array(Integer, Object), nil]
      def read(buffer) = @reader.read(buffer)
    end
  end
end
