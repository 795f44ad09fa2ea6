# frozen_string_literal: true

module Heron
  module Control
    # What {Control.for_server} and {Control.for_cluster} hand back: the state it reports and
    # the listener to close.
    class Handle
      # @return [State]
      attr_reader :state
      # @return [Control::Server, nil] nil when `control_bind` is off.
      attr_reader :listener

      # @param state [State]
      # @param listener [Control::Server, nil]
      # @param on_close [#call, nil] runs after the listener closes (a master removes its
      #   {WorkerProbe} directory).
      def initialize(state, listener, on_close = nil)
        @state = state
        @listener = listener
        @on_close = on_close
      end

      # @return [String, nil] the control URL.
      def url = @listener&.url

      # @return [Hash{String => BasicSocket}] the control listener for a hot restart, by key.
      def handover = @listener ? @listener.handover : {}

      # At a hot restart's handover: closes the listener, leaving it to the new process.
      # @return [void]
      def handed_over! = @listener&.handed_over!

      # Runs the block (a fork) while the control listener's thread is between two turns of its
      # reactor ({Control::Server#quiesced}); at once when there is no listener.
      # @yield the fork.
      # @return [Object] the block's value.
      def quiesced(&)
        @listener ? @listener.quiesced(&) : yield
      end

      # Stops the listener.
      # @return [void]
      def close
        @listener&.close
        @on_close&.call
      end
    end
  end
end
