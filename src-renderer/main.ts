import { mount } from 'svelte';
import App from './App.svelte';
import { resolveApi } from './lib/api';
import './styles/global.css';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(App, { target, props: { gufo: resolveApi() } });
