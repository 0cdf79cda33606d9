// The app's commands, listed once. `with_app_commands!(m)` calls the macro `m` with the list:
// `main.rs` registers them with Tauri, `build.rs` places them under the capability ACL (and
// checks `src-tauri/capabilities/default.json` allows exactly these), and a test in `main.rs`
// checks `ui/src/lib/api.ts` calls exactly these. Adding a command: write it in `commands.rs`,
// name it here, allow it in the capability file, wrap it in `api.ts`.
macro_rules! with_app_commands {
    ($then:ident) => {
        $then! {
            app_state,
            open_workspace,
            create_workspace,
            switch_user,
            log_location,
            describe_object,
            query_records,
            get_record,
            save_record,
            record_history,
            import_csv,
            export_csv,
            provider_settings,
            save_provider,
            remove_provider,
            test_provider,
            discover_providers,
            pin_model,
            check_model,
            ask,
            cancel_model_call,
            summarize,
            extract,
            proposals,
            review_proposal,
            accept_proposal,
            discard_proposal,
            undo_proposal,
            auto_apply_list,
            set_auto_apply,
            save_list_view,
            list_views,
            learn_from_correction,
            learned_examples,
            forget_example,
            vocabulary,
            save_terms,
            ai_studio,
            prompt_diff,
            publish_prompt,
            activate_prompt,
            bind_model,
            run_eval_suite,
        }
    };
}
