# frozen_string_literal: true

module Heron
  module Control
    # What {Control.for_server} and {Control.for_cluster} hand back: the state to mark ready and
    # the listener to close.
    class Handle
      # @return [State]
      attr_reader :state
      # @return [Control::Server, nil] nil when `control_bind` is off.
      attr_reader :listener

      # @param state [State]
      # @param listener [Control::Server, nil]
      def initialize(state, listener)
        @state = state
        @listener = listener
      end

      # Marks the process as serving.
      # @return [void]
      def ready! = @state.ready!

      # @return [String, nil] the control URL.
      def url = @listener&.url

      # Stops the listener.
      # @return [void]
      def close = @listener&.close
    end
  end
end
