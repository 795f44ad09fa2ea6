# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # The association an ORM is loading lazily for one record, while its query runs: the
      # {Recorder} tags the statements run meanwhile with it, so an N+1 made of them can be
      # advised the way bullet does: `Users::User => [:roles]: add .eager(:roles)`.
      class AssociationLoad
        KEY = :__heron_association_load
        # How each ORM loads an association up front.
        EAGER = { sequel: "eager", active_record: "includes" }.freeze

        # Runs a block with an association load marked on the current fiber (nested loads mark
        # the innermost; the mark is fiber-local, so concurrent requests keep theirs apart).
        # @param model [Class, String] the model whose record reads the association.
        # @param name [Symbol, String] the association.
        # @param adapter [Symbol] :sequel or :active_record.
        # @yield the load.
        # @return [Object] the block's value.
        def self.around(model, name, adapter)
          previous = Thread.current[KEY]
          Thread.current[KEY] = new(model, name, adapter)
          yield
        ensure
          Thread.current[KEY] = previous
        end

        # @return [AssociationLoad, nil] the load under way on the current fiber.
        def self.current
          Thread.current[KEY]
        end

        # @param model [Class, String] see {.around}.
        # @param name [Symbol, String] the association.
        # @param adapter [Symbol] :sequel or :active_record.
        def initialize(model, name, adapter)
          @model = model.is_a?(Module) ? model.name : model.to_s
          @name = name.to_sym
          @adapter = adapter
        end

        # @return [String] e.g. "Users::User => [:roles]: add .eager(:roles)".
        def advice
          "#{@model} => [#{@name.inspect}]: add .#{EAGER.fetch(@adapter, 'eager')}(#{@name.inspect})"
        end
      end
    end
  end
end
